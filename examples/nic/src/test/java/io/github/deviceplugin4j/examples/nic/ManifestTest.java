package io.github.deviceplugin4j.examples.nic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.github.deviceplugin4j.examples.testing.Manifests;
import io.github.deviceplugin4j.examples.testing.StrictYaml;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The k8s/ manifests are valid Kubernetes objects that deploy and use this plugin. */
class ManifestTest {
  static final Path K8S = Path.of("k8s");

  @Test
  void daemonSetIsAPrivilegedHostNetworkPluginWithTheKubeletAndCniDirsMounted() throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);

    PodSpec spec = ds.getSpec().getTemplate().getSpec();
    assertThat(ds.getSpec().getSelector().getMatchLabels())
        .isEqualTo(ds.getSpec().getTemplate().getMetadata().getLabels());
    assertThat(spec.getHostNetwork()).as("/sys/class/net must show the host's PFs").isTrue();
    Container c = spec.getContainers().get(0);
    assertThat(c.getSecurityContext().getPrivileged()).isTrue();
    assertThat(Manifests.hostPathMounts(spec, c))
        .containsEntry("/var/lib/kubelet/device-plugins", "/var/lib/kubelet/device-plugins")
        .containsEntry("/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins_registry")
        .containsEntry(NicConfig.DEVINFO_DIR.toString(), NicConfig.DEVINFO_DIR.toString())
        .containsEntry("/host/sys", "/sys")
        .containsEntry("/host/dev", "/dev");
    assertThat(c.getVolumeMounts())
        .anySatisfy(
            m -> {
              assertThat(m.getMountPath()).isEqualTo("/etc/deviceplugin4j");
              assertThat(spec.getVolumes())
                  .filteredOn(v -> v.getName().equals(m.getName()))
                  .singleElement()
                  .satisfies(
                      v -> assertThat(v.getConfigMap().getName()).isEqualTo("deviceplugin4j-nic"));
            });
    assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(c.getResources().getLimits()).containsKeys("cpu", "memory");
  }

  @Test
  void probesAndScrapeAnnotationsUseThePortThePluginListensOn(@TempDir Path dir) throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);
    ConfigMap cm = StrictYaml.read(K8S.resolve("configmap.yaml"), ConfigMap.class);
    Path file = dir.resolve("nic.properties");
    Files.writeString(file, cm.getData().get("nic.properties"));
    List<String> args =
        new ArrayList<>(ds.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs());
    args.replaceAll(a -> a.startsWith("--config=") ? "--config=" + file : a);
    int port =
        NicConfig.parse(args.toArray(String[]::new), Map.of())
            .metricsAddress()
            .orElseThrow()
            .getPort();

    assertThat(Manifests.metricsEndpointProblems(ds, port)).isEmpty();
  }

  @Test
  void podRequestsAPoolOfTheConfigMap(@TempDir Path dir) throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);
    ConfigMap cm = StrictYaml.read(K8S.resolve("configmap.yaml"), ConfigMap.class);
    Path file = dir.resolve("nic.properties");
    Files.writeString(file, cm.getData().get("nic.properties"));
    List<String> args =
        new ArrayList<>(ds.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs());
    assertThat(args).contains("--config=/etc/deviceplugin4j/nic.properties");
    args.replaceAll(a -> a.startsWith("--config=") ? "--config=" + file : a);
    NicConfig config = NicConfig.parse(args.toArray(String[]::new), Map.of());
    List<String> advertised = config.pools().stream().map(config::resourceName).toList();
    Pod pod = StrictYaml.read(K8S.resolve("pod.yaml"), Pod.class);

    Container app = pod.getSpec().getContainers().get(0);

    assertThat(advertised)
        .containsExactly("nic.example.com/sriov_dpdk", "nic.example.com/sriov_net");
    assertThat(app.getResources().getLimits()).containsOnlyKeys("nic.example.com/sriov_net");
    assertThat(app.getResources().getLimits().get("nic.example.com/sriov_net"))
        .isEqualTo(new Quantity("1"));
    assertThat(app.getCommand().get(2))
        .contains("$" + NicBackend.envName("nic.example.com/sriov_net"));
  }

  @Test
  void unknownFieldsAreRejected() throws Exception {
    String yaml =
        Files.readString(K8S.resolve("daemonset.yaml")).replace("hostNetwork:", "hostnetwork:");

    assertThatThrownBy(() -> StrictYaml.read(yaml, DaemonSet.class))
        .hasMessageContaining("hostnetwork");
  }
}
