package io.github.deviceplugin4j.examples.infiniband;

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
import org.junit.jupiter.api.Test;

/** The k8s/ manifests are valid Kubernetes objects that deploy and use this plugin. */
class ManifestTest {
  static final Path K8S = Path.of("k8s");

  @Test
  void daemonSetIsAPrivilegedPluginWithTheKubeletDirsMounted() throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);

    PodSpec spec = ds.getSpec().getTemplate().getSpec();
    assertThat(ds.getSpec().getSelector().getMatchLabels())
        .isEqualTo(ds.getSpec().getTemplate().getMetadata().getLabels());
    Container c = spec.getContainers().get(0);
    assertThat(c.getSecurityContext().getPrivileged()).isTrue();
    assertThat(Manifests.hostPathMounts(spec, c))
        .containsEntry("/var/lib/kubelet/device-plugins", "/var/lib/kubelet/device-plugins")
        .containsEntry("/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins_registry")
        .containsEntry("/host/sys", "/sys")
        .containsEntry("/host/dev", "/dev");
    assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(c.getResources().getLimits()).containsKeys("cpu", "memory");
  }

  @Test
  void probesAndScrapeAnnotationsUseThePortThePluginListensOn() throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);
    Container plugin = ds.getSpec().getTemplate().getSpec().getContainers().get(0);
    int port =
        InfinibandConfig.parse(plugin.getArgs().toArray(String[]::new), Map.of())
            .metricsAddress()
            .orElseThrow()
            .getPort();

    assertThat(Manifests.metricsEndpointProblems(ds, port)).isEmpty();
  }

  @Test
  void podRequestsTheResourceThePluginAdvertises() throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);
    Container plugin = ds.getSpec().getTemplate().getSpec().getContainers().get(0);
    InfinibandConfig config =
        InfinibandConfig.parse(plugin.getArgs().toArray(String[]::new), Map.of());
    Pod pod = StrictYaml.read(K8S.resolve("pod.yaml"), Pod.class);

    Container app = pod.getSpec().getContainers().get(0);

    assertThat(config.mode()).isEqualTo(InfinibandConfig.Mode.SHARED);
    assertThat(config.slots()).isEqualTo(8);
    assertThat(app.getResources().getLimits()).containsOnlyKeys(config.resourceName());
    assertThat(app.getResources().getLimits().get(config.resourceName()))
        .isEqualTo(new Quantity("1"));
    assertThat(app.getSecurityContext().getCapabilities().getAdd()).containsExactly("IPC_LOCK");
  }

  @Test
  void unknownFieldsAreRejected() throws Exception {
    String yaml = Files.readString(K8S.resolve("pod.yaml")).replace("limits:", "limit:");

    assertThatThrownBy(() -> StrictYaml.read(yaml, Pod.class)).hasMessageContaining("limit");
  }
}
