package io.github.deviceplugin4j.core.podresources;

import java.util.List;
import java.util.Objects;

/**
 * The resources the kubelet assigned to one pod.
 *
 * @param namespace the pod's namespace
 * @param name the pod's name
 * @param containers its containers
 */
public record PodResources(String namespace, String name, List<ContainerResources> containers) {

  /**
   * Checks for nulls and copies the list.
   *
   * @param namespace see {@link #namespace()}
   * @param name see {@link #name()}
   * @param containers see {@link #containers()}
   */
  public PodResources {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    containers = List.copyOf(containers);
  }
}
