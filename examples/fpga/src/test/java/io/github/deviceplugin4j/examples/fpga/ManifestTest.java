package io.github.deviceplugin4j.examples.fpga;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.github.deviceplugin4j.examples.testing.Manifests;
import io.github.deviceplugin4j.examples.testing.StrictYaml;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
  }

  @Test
  void probesAndScrapeAnnotationsUseThePortThePluginListensOn() throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);

    assertThat(Manifests.metricsEndpointProblems(ds, configuredPort(ds))).isEmpty();
  }

  @Test
  void aProbeOnAnotherPortIsCaught() throws Exception {
    String yaml =
        Files.readString(K8S.resolve("daemonset.yaml")).replaceFirst("port: metrics", "port: 9999");
    DaemonSet ds = StrictYaml.read(yaml, DaemonSet.class);

    assertThat(Manifests.metricsEndpointProblems(ds, configuredPort(ds)))
        .singleElement()
        .asString()
        .contains("livenessProbe probes port 9999");
  }

  @Test
  void podMonitorSelectsThePluginPodsAndScrapesTheMetricsPort() throws Exception {
    DaemonSet ds = StrictYaml.read(K8S.resolve("daemonset.yaml"), DaemonSet.class);
    PodMonitor pm = StrictYaml.read(K8S.resolve("podmonitor.yaml"), PodMonitor.class);

    assertThat(pm.apiVersion()).isEqualTo("monitoring.coreos.com/v1");
    assertThat(pm.kind()).isEqualTo("PodMonitor");
    assertThat(pm.metadata().getNamespace()).isEqualTo(ds.getMetadata().getNamespace());
    assertThat(ds.getSpec().getTemplate().getMetadata().getLabels())
        .containsAllEntriesOf(pm.spec().selector().getMatchLabels());
    Container c = ds.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(pm.spec().podMetricsEndpoints())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.path()).isEqualTo("/metrics");
              assertThat(Manifests.resolve(c, new IntOrString(e.port())))
                  .isEqualTo(configuredPort(ds));
            });
  }

  /** The Prometheus Operator's PodMonitor, the fields this example uses. */
  record PodMonitor(String apiVersion, String kind, ObjectMeta metadata, PodMonitorSpec spec) {}

  record PodMonitorSpec(LabelSelector selector, List<Endpoint> podMetricsEndpoints) {}

  record Endpoint(String port, String path, String interval) {}

  private static int configuredPort(DaemonSet ds) {
    Container plugin = ds.getSpec().getTemplate().getSpec().getContainers().get(0);
    Map<String, String> env =
        plugin.getEnv().stream().collect(Collectors.toMap(e -> e.getName(), e -> e.getValue()));
    return FpgaConfig.parse(plugin.getArgs().toArray(String[]::new), env)
        .metricsAddress()
        .orElseThrow(() -> new AssertionError("the DaemonSet does not turn the endpoint on"))
        .getPort();
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
