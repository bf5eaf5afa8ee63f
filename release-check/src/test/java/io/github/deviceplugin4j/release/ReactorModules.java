package io.github.deviceplugin4j.release;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The modules of the build, read from the POM files: which are published and which are not. A
 * module is published unless its pom, or a pom it inherits from, sets {@code publish.skip} to true.
 */
final class ReactorModules {

  /** One module of the reactor. */
  record Module(Path dir, String artifactId, String packaging, boolean published) {}

  private ReactorModules() {}

  /** Every module reachable from the root pom's {@code <modules>}, the root included. */
  static List<Module> read(Path root) {
    List<Module> modules = new ArrayList<>();
    collect(root.normalize(), modules);
    return modules;
  }

  private static void collect(Path dir, List<Module> into) {
    Path pomFile = dir.resolve("pom.xml");
    Element pom = parse(pomFile).getDocumentElement();
    String packaging = child(pom, "packaging").map(Node::getTextContent).orElse("jar").trim();
    into.add(
        new Module(
            dir,
            text(pom, "artifactId", pomFile),
            packaging,
            !Boolean.parseBoolean(skip(pomFile))));
    for (Element modules : children(pom, "modules")) {
      for (Element module : children(modules, "module")) {
        collect(dir.resolve(module.getTextContent().trim()).normalize(), into);
      }
    }
  }

  /** The value of publish.skip for this pom: its own, else its parent's, else "false". */
  private static String skip(Path pomFile) {
    Element pom = parse(pomFile).getDocumentElement();
    for (Element properties : children(pom, "properties")) {
      Optional<Element> own = child(properties, "publish.skip");
      if (own.isPresent()) {
        return own.get().getTextContent().trim();
      }
    }
    Optional<Element> parent = child(pom, "parent");
    if (parent.isEmpty()) {
      return "false";
    }
    String relative =
        child(parent.get(), "relativePath").map(Node::getTextContent).orElse("../pom.xml").trim();
    Path parentFile = pomFile.getParent().resolve(relative).normalize();
    if (Files.isDirectory(parentFile)) {
      parentFile = parentFile.resolve("pom.xml");
    }
    return Files.isRegularFile(parentFile) ? skip(parentFile) : "false";
  }

  static Document parse(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
      factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
      return factory.newDocumentBuilder().parse(in);
    } catch (IOException | javax.xml.parsers.ParserConfigurationException e) {
      throw new IllegalStateException("cannot read " + file + ": " + e, e);
    } catch (org.xml.sax.SAXException e) {
      throw new IllegalStateException(file + " is not well-formed XML: " + e.getMessage(), e);
    }
  }

  static List<Element> children(Element parent, String name) {
    List<Element> found = new ArrayList<>();
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(name)) {
        found.add(e);
      }
    }
    return found;
  }

  static Optional<Element> child(Element parent, String name) {
    return children(parent, name).stream().findFirst();
  }

  private static String text(Element parent, String name, Path file) {
    return child(parent, name)
        .map(e -> e.getTextContent().trim())
        .orElseThrow(() -> new IllegalStateException(file + " has no <" + name + ">"));
  }
}
