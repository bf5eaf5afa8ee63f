package io.github.deviceplugin4j.examples.generic;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.github.deviceplugin4j.examples.common.PluginCli;
import io.github.deviceplugin4j.examples.generic.GenericConfig.Resource;
import io.github.deviceplugin4j.examples.testing.Manifests;
import io.github.deviceplugin4j.examples.testing.StrictYaml;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The k8s/ manifests are valid Kubernetes objects that deploy and use this plugin. */
class ManifestTest {
  static final Path K8S = Path.of("k8s");

  @Test
  void daemonSetIsAPrivilegedPluginWithTheKubeletDirsAndTheConfigMounted() throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);
    ConfigMap cm = StrictYaml.read(K8S.resolve("configmap.yaml"), ConfigMap.class);

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
    // --config names a key of the ConfigMap, mounted where the flag says.
    String config =
        c.getArgs().stream()
            .filter(a -> a.startsWith("--config="))
            .findFirst()
            .orElseThrow()
            .substring("--config=".length());
    Path file = Path.of(config);
    VolumeMount mount =
        c.getVolumeMounts().stream()
            .filter(m -> Path.of(m.getMountPath()).equals(file.getParent()))
            .findFirst()
            .orElseThrow();
    Volume volume =
        spec.getVolumes().stream()
            .filter(v -> v.getName().equals(mount.getName()))
            .findFirst()
            .orElseThrow();
    assertThat(volume.getConfigMap().getName()).isEqualTo(cm.getMetadata().getName());
    assertThat(cm.getMetadata().getNamespace()).isEqualTo(ds.getMetadata().getNamespace());
    assertThat(cm.getData()).containsKey(file.getFileName().toString());
    assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
  }

  @Test
  void probesAndScrapeAnnotationsUseThePortThePluginListensOn() throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);
    Container c = ds.getSpec().getTemplate().getSpec().getContainers().get(0);
    GenericPluginCommand command =
        PluginCli.parse(
            new GenericPluginCommand(),
            GenericPluginCommand.defaults(Map.of()),
            c.getArgs().toArray(String[]::new));
    int port =
        command
            .metrics
            .address()
            .orElseThrow(() -> new AssertionError("the DaemonSet does not turn the endpoint on"))
            .getPort();

    assertThat(Manifests.metricsEndpointProblems(ds, port)).isEmpty();
  }

  @Test
  void theConfigMapParsesAndThePodRequestsAResourceItServes() throws Exception {
    ConfigMap cm = StrictYaml.read(K8S.resolve("configmap.yaml"), ConfigMap.class);
    GenericConfig config = GenericConfig.parse(cm.getData().get("config.yaml"));
    Pod pod = StrictYaml.read(K8S.resolve("pod.yaml"), Pod.class);

    assertThat(config.resources())
        .extracting(Resource::name)
        .containsExactly(
            "generic.example.com/serial", "generic.example.com/yubikey", "generic.example.com/nic");
    assertThat(config.resources()).allSatisfy(r -> assertThat(r.sharing().replicas()).isEqualTo(2));
    Container app = pod.getSpec().getContainers().get(0);
    assertThat(app.getResources().getLimits())
        .containsOnlyKeys("generic.example.com/serial")
        .containsEntry("generic.example.com/serial", new Quantity("1"));
  }
}
