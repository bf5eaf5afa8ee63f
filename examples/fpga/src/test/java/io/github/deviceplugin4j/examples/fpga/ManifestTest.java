package io.github.deviceplugin4j.examples.fpga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.github.deviceplugin4j.examples.testing.Manifests;
import io.github.deviceplugin4j.examples.testing.StrictYaml;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The k8s/ manifests are valid Kubernetes objects that deploy and use this plugin. */
class ManifestTest {
  static final Path K8S = Path.of("k8s");

  @Test
  void daemonSetIsAPrivilegedPluginWithTheKubeletDirsMounted() throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);

    assertThat(ds.getApiVersion()).isEqualTo("apps/v1");
    assertThat(ds.getKind()).isEqualTo("DaemonSet");
    assertThat(ds.getSpec().getSelector().getMatchLabels())
        .isEqualTo(ds.getSpec().getTemplate().getMetadata().getLabels());
    PodSpec spec = ds.getSpec().getTemplate().getSpec();
    Container c = spec.getContainers().get(0);
    assertThat(c.getSecurityContext().getPrivileged()).isTrue();
    Map<String, String> mounts = Manifests.hostPathMounts(spec, c);
    assertThat(mounts)
        .containsEntry("/var/lib/kubelet/device-plugins", "/var/lib/kubelet/device-plugins")
        .containsEntry("/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins_registry")
        .containsEntry("/host/sys", "/sys")
        .containsEntry("/host/dev", "/dev");
    assertThat(c.getArgs()).contains("--root=/host");
    assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(Quantity.getAmountInBytes(c.getResources().getLimits().get("memory")).longValue())
        .as("room for the tuned JVM (about 60 MiB RSS)")
        .isGreaterThanOrEqualTo(128L << 20);
    assertThat(c.getReadinessProbe().getExec().getCommand())
        .containsExactly("test", "-f", FpgaConfig.defaults(Path.of("/")).readyFile().toString());
  }

  @Test
  void podRequestsAResourceThisPluginAdvertises() throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);
    Container plugin = ds.getSpec().getTemplate().getSpec().getContainers().get(0);
    Map<String, String> env =
        plugin.getEnv().stream().collect(Collectors.toMap(e -> e.getName(), e -> e.getValue()));
    FpgaConfig config = FpgaConfig.parse(plugin.getArgs().toArray(String[]::new), env);
    Pod pod = StrictYaml.read(K8S.resolve("pod.yaml"), Pod.class);

    Map<String, Quantity> limits = pod.getSpec().getContainers().get(0).getResources().getLimits();

    String prefix = config.resourceName("");
    assertThat(limits.keySet())
        .singleElement()
        .satisfies(
            name ->
                assertThat(name)
                    .startsWith(prefix)
                    .matches(Pattern.quote(prefix) + "[0-9a-f]{32}")
                    .isEqualTo(config.resourceName(name.substring(prefix.length()))));
    assertThat(limits.values()).singleElement().isEqualTo(new Quantity("1"));
  }

  @Test
  void unknownFieldsAreRejected() throws Exception {
    String yaml = Files.readString(K8S.resolve("daemonset.yaml")).replace("hostPath:", "hostpath:");

    assertThatThrownBy(() -> StrictYaml.read(yaml, DaemonSet.class))
        .hasMessageContaining("hostpath");
  }
}
