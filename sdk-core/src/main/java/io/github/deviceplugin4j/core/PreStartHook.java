package io.github.deviceplugin4j.core;

import java.util.List;

/**
 * Optional capability: work to do before each container that uses the devices starts (reset,
 * firmware check). When a backend implements it, the core advertises {@code pre_start_required},
 * and the kubelet waits up to 30 seconds for it.
 */
@FunctionalInterface
public interface PreStartHook {

  /**
   * Prepares the devices of a container that is about to start.
   *
   * @param devices the container's devices, known to the core
   * @throws Exception to fail the container start with a clear error
   */
  void preStart(List<Device> devices) throws Exception;
}
