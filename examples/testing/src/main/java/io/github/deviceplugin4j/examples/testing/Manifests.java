package io.github.deviceplugin4j.examples.testing;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
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
}
