package io.github.deviceplugin4j.docs.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.example.accel.AccelBackend;
import com.example.accel.AccelPlugin;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.github.deviceplugin4j.docs.check.DocsTree;
import io.github.deviceplugin4j.docs.check.Snippets;
import io.github.deviceplugin4j.examples.testing.StrictYaml;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * docs/deploying.md deploys the tutorial's plugin from its own files: the Dockerfile and the
 * manifests shown there are read from the page, and must fit the tutorial's project
 * (examples/getting-started), its code and each other.
 */
class DeployingTest {

  static final Path ROOT = DocsTree.root();
  static final Path PROJECT = ROOT.resolve("examples/getting-started");

  static String dockerfile;
  static DaemonSet daemonSet;
  static Pod pod;
  static Document pom;

  @BeforeAll
  static void readThePage() throws Exception {
    String page = Files.readString(ROOT.resolve("docs/deploying.md"));
    List<Snippets.Block> blocks = Snippets.blocks(page, new ArrayList<>(), "deploying.md");
    dockerfile = only(blocks, b -> b.language().equals("dockerfile"));
    daemonSet =
        StrictYaml.read(
            only(blocks, b -> b.language().equals("yaml") && b.text().contains("kind: DaemonSet")),
            DaemonSet.class);
    pod =
        StrictYaml.read(
            only(blocks, b -> b.language().equals("yaml") && b.text().contains("kind: Pod")),
            Pod.class);
    pom =
        DocumentBuilderFactory.newInstance()
            .newDocumentBuilder()
            .parse(PROJECT.resolve("pom.xml").toFile());
  }

  private static String only(List<Snippets.Block> blocks, Function<Snippets.Block, Boolean> which) {
    List<String> found = blocks.stream().filter(which::apply).map(Snippets.Block::text).toList();
    assertThat(found).as("blocks of deploying.md").hasSize(1);
    return found.get(0);
  }

  static PodSpec spec() {
    return daemonSet.getSpec().getTemplate().getSpec();
  }

  static Container plugin() {
    assertThat(spec().getContainers()).hasSize(1);
    return spec().getContainers().get(0);
  }

  /** The text of the shade plugin's configuration element of that name. */
  static String shade(String element) {
    NodeList plugins = pom.getElementsByTagName("plugin");
    for (int i = 0; i < plugins.getLength(); i++) {
      Element plugin = (Element) plugins.item(i);
      if (text(plugin, "artifactId").equals("maven-shade-plugin")
          && plugin.getElementsByTagName(element).getLength() > 0) {
        return text(plugin, element);
      }
    }
    throw new AssertionError("the tutorial's pom has no shade " + element);
  }

  static String text(Element parent, String tag) {
    return parent.getElementsByTagName(tag).item(0).getTextContent().strip();
  }

  static String dockerArgument(String pattern) {
    Matcher m = Pattern.compile(pattern).matcher(dockerfile);
    assertThat(m.find()).as("the Dockerfile has " + pattern).isTrue();
    return m.group(1);
  }

  @Test
  void theProbeTestsTheReadinessFileTheMainKeeps() {
    assertThat(plugin().getReadinessProbe().getExec().getCommand())
        .containsExactly("test", "-f", AccelPlugin.READY_FILE.toString());
  }

  @Test
  void theImageCarriesTheTutorialsShadedJarAndRunsItsMainClass() throws Exception {
    String jar = shade("finalName") + ".jar";
    String inImage = dockerArgument("COPY target/" + Pattern.quote(jar) + " (\\S+)");

    assertThat(jar).isEqualTo("accel-plugin.jar");
    assertThat(dockerArgument("ENTRYPOINT \\[.*\"-jar\", \"([^\"]+)\"\\]")).isEqualTo(inImage);
    // The training run runs the image's jar and writes the AOT cache at the path the plugin
    // starts with.
    assertThat(dockerArgument("-XX:AOTCacheOutput=\\S+ -jar (\\S+)")).isEqualTo(inImage);
    assertThat(dockerArgument("-XX:AOTCacheOutput=(\\S+)"))
        .isEqualTo(dockerArgument("\"-XX:AOTCache=([^\"]+)\""))
        .isEqualTo(dockerArgument("test -s (\\S+)"));
    Class<?> main = Class.forName(shade("mainClass"));
    Method method = main.getMethod("main", String[].class);
    assertThat(Modifier.isStatic(method.getModifiers())).isTrue();
    assertThat(main).isEqualTo(AccelPlugin.class);
  }

  @Test
  void theTrainingRunUsesTheFakeKubeletJarThePomCopies() {
    NodeList items = pom.getElementsByTagName("artifactItem");
    assertThat(items.getLength()).isEqualTo(1);
    Element item = (Element) items.item(0);

    assertThat(text(item, "artifactId")).isEqualTo("deviceplugin4j-testkit");
    assertThat(text(item, "classifier")).isEqualTo("cli");
    assertThat(dockerArgument("source=target/([^,]+),target="))
        .isEqualTo(text(item, "destFileName"));
  }

  @Test
  void nothingInTheImageOrTheDaemonSetIsAnFpgaLeftover() {
    assertThat(dockerfile.toLowerCase()).doesNotContain("fpga", "--mode", "--domain");
    assertThat(plugin().getArgs()).noneMatch(a -> a.toLowerCase().contains("fpga"));
    assertThat(spec().getNodeSelector())
        .as("NFD labels are optional, in a comment")
        .isNullOrEmpty();
  }

  @Test
  void theRootTheImageDefaultsToIsTheHostsDevAndSysMountedReadOnly() {
    String root = dockerArgument("CMD \\[\"([^\"]+)\"\\]");
    Map<String, VolumeMount> mounts =
        plugin().getVolumeMounts().stream()
            .collect(Collectors.toMap(VolumeMount::getMountPath, m -> m));
    Map<String, Volume> volumes =
        spec().getVolumes().stream().collect(Collectors.toMap(Volume::getName, v -> v));

    assertThat(plugin().getArgs()).containsExactly(root);
    for (String dir : List.of("dev", "sys")) {
      VolumeMount mount = mounts.get(root + "/" + dir);
      assertThat(mount).as(root + "/" + dir + " is mounted").isNotNull();
      assertThat(mount.getReadOnly()).isTrue();
      assertThat(volumes.get(mount.getName()).getHostPath().getPath()).isEqualTo("/" + dir);
    }
    VolumeMount kubelet = mounts.get("/var/lib/kubelet/device-plugins");
    assertThat(volumes.get(kubelet.getName()).getHostPath().getPath())
        .isEqualTo("/var/lib/kubelet/device-plugins");
    assertThat(kubelet.getReadOnly()).isNotEqualTo(Boolean.TRUE);
  }

  @Test
  void everyMountHasItsVolumeAndEveryVolumeIsMounted() {
    List<String> mounted = plugin().getVolumeMounts().stream().map(VolumeMount::getName).toList();
    List<String> declared = spec().getVolumes().stream().map(Volume::getName).toList();

    assertThat(mounted).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(declared);
  }

  @Test
  void aReadOnlyRootFileSystemKeepsAWritableTmpForTheReadinessFile() {
    assertThat(plugin().getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
    assertThat(plugin().getSecurityContext().getPrivileged()).isNotEqualTo(Boolean.TRUE);
    assertThat(plugin().getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    String tmp = AccelPlugin.READY_FILE.getParent().toString();
    VolumeMount mount =
        plugin().getVolumeMounts().stream()
            .filter(m -> m.getMountPath().equals(tmp))
            .findFirst()
            .orElseThrow(() -> new AssertionError("nothing mounted at " + tmp));
    Volume volume =
        spec().getVolumes().stream()
            .filter(v -> v.getName().equals(mount.getName()))
            .findFirst()
            .orElseThrow();
    assertThat(volume.getEmptyDir()).isNotNull();
    assertThat(mount.getReadOnly()).isNotEqualTo(Boolean.TRUE);
  }

  @Test
  void aDevicePluginNeedsNoServiceAccount() {
    assertThat(spec().getServiceAccountName()).isNull();
    assertThat(spec().getAutomountServiceAccountToken()).isFalse();
  }

  @Test
  void theSamplePodAsksForTheTutorialsResource() {
    Map<String, Quantity> limits = pod.getSpec().getContainers().get(0).getResources().getLimits();

    assertThat(limits)
        .containsOnlyKeys(new AccelBackend(Path.of("/")).resourceName())
        .containsValue(new Quantity("1"));
  }

  @Test
  void theDaemonSetsLabelsSelectItsPods() {
    assertThat(daemonSet.getSpec().getSelector().getMatchLabels())
        .isEqualTo(daemonSet.getSpec().getTemplate().getMetadata().getLabels());
  }

  @Test
  void thePageShowsTheProjectsOwnFiles() throws IOException {
    String page = Files.readString(ROOT.resolve("docs/deploying.md"));

    assertThat(page)
        .contains("<!-- snippet: examples/getting-started/Dockerfile -->")
        .contains("<!-- snippet: examples/getting-started/k8s/daemonset.yaml -->")
        .contains("<!-- snippet: examples/getting-started/k8s/pod.yaml -->");
  }
}
