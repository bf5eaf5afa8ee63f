package io.github.deviceplugin4j.examples.testing;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Questions the examples' manifest tests ask of a pod spec.
 *
 * <pre>{@code
 * assertThat(Manifests.hostPathMounts(spec, container))
 *     .containsEntry("/var/lib/kubelet/device-plugins", "/var/lib/kubelet/device-plugins");
 * }</pre>
 */
public final class Manifests {
  private Manifests() {}

  /**
   * The host directories a container mounts.
   *
   * @param spec the pod spec, which declares the volumes
   * @param container one of its containers
   * @return mount path in the container to path on the host, for every {@code hostPath} volume the
   *     container mounts
   */
  public static Map<String, String> hostPathMounts(PodSpec spec, Container container) {
    Map<String, String> hostPaths =
        spec.getVolumes().stream()
            .filter(v -> v.getHostPath() != null)
            .collect(Collectors.toMap(Volume::getName, v -> v.getHostPath().getPath()));
    return container.getVolumeMounts().stream()
        .filter(m -> hostPaths.containsKey(m.getName()))
        .collect(Collectors.toMap(VolumeMount::getMountPath, m -> hostPaths.get(m.getName())));
  }

  /**
   * What is wrong with a DaemonSet's wiring of the plugin's HTTP endpoint: the first container must
   * declare the port, probe {@code /healthz} (liveness) and {@code /readyz} (readiness) on it with
   * {@code httpGet}, and the pod template must carry the {@code prometheus.io/scrape}, {@code
   * prometheus.io/port} and {@code prometheus.io/path} annotations for it.
   *
   * @param ds the DaemonSet
   * @param port the port the plugin listens on, as its settings say
   * @return one line per problem; empty when all is well
   */
  public static List<String> metricsEndpointProblems(DaemonSet ds, int port) {
    List<String> problems = new ArrayList<>();
    Container c = ds.getSpec().getTemplate().getSpec().getContainers().get(0);
    List<ContainerPort> ports = c.getPorts() == null ? List.of() : c.getPorts();
    if (ports.stream().noneMatch(p -> p.getContainerPort() == port)) {
      problems.add("no containerPort " + port + " in " + ports);
    }
    probe(problems, "livenessProbe", c.getLivenessProbe(), "/healthz", c, port);
    probe(problems, "readinessProbe", c.getReadinessProbe(), "/readyz", c, port);
    Map<String, String> annotations = ds.getSpec().getTemplate().getMetadata().getAnnotations();
    Map<String, String> expected =
        Map.of(
            "prometheus.io/scrape",
            "true",
            "prometheus.io/port",
            Integer.toString(port),
            "prometheus.io/path",
            "/metrics");
    expected.forEach(
        (k, v) -> {
          String actual = annotations == null ? null : annotations.get(k);
          if (!v.equals(actual)) {
            problems.add("annotation " + k + " is " + actual + ", expected " + v);
          }
        });
    return problems;
  }

  private static void probe(
      List<String> problems, String name, Probe probe, String path, Container c, int port) {
    HTTPGetAction get = probe == null ? null : probe.getHttpGet();
    if (get == null) {
      problems.add(name + " is not an httpGet probe");
      return;
    }
    if (!path.equals(get.getPath())) {
      problems.add(name + " probes " + get.getPath() + ", expected " + path);
    }
    if (get.getPort() == null) {
      problems.add(name + " has no port");
      return;
    }
    Integer probed = resolve(c, get.getPort());
    if (probed == null || probed != port) {
      problems.add(
          name
              + " probes port "
              + (get.getPort().getIntVal() != null
                  ? get.getPort().getIntVal()
                  : get.getPort().getStrVal())
              + " ("
              + probed
              + "), the plugin listens on "
              + port);
    }
  }

  /**
   * The port number a probe's port stands for.
   *
   * @param c the container
   * @param port a number, or the name of one of the container's ports
   * @return the number, or null when the name is not declared
   */
  public static Integer resolve(Container c, IntOrString port) {
    if (port == null) {
      return null;
    }
    if (port.getIntVal() != null) {
      return port.getIntVal();
    }
    return (c.getPorts() == null ? List.<ContainerPort>of() : c.getPorts())
        .stream()
            .filter(p -> port.getStrVal().equals(p.getName()))
            .map(ContainerPort::getContainerPort)
            .findFirst()
            .orElse(null);
  }
}
