package io.github.deviceplugin4j.examples.common;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What {@code --version} prints: the program's name and the Maven project version it was built
 * from, e.g. {@code deviceplugin4j-example-fpga 0.1.0}.
 *
 * <pre>{@code
 * @Command(name = "my-plugin", mixinStandardHelpOptions = true,
 *     versionProvider = ExampleVersion.class)
 * }</pre>
 */
public final class ExampleVersion implements IVersionProvider {
  @Spec CommandSpec spec;

  /** Creates the provider; picocli sets its command. */
  public ExampleVersion() {}

  /**
   * The project version this code was built from (Maven fills it in when the resources are copied).
   *
   * @return e.g. {@code 0.1.0}
   */
  public static String version() {
    Properties p = new Properties();
    try (InputStream in = ExampleVersion.class.getResourceAsStream("version.properties")) {
      if (in != null) {
        p.load(in);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return p.getProperty("version", "unknown");
  }

  @Override
  public String[] getVersion() {
    return new String[] {spec.qualifiedName() + " " + version()};
  }
}
