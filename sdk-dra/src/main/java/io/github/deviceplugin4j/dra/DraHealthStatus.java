package io.github.deviceplugin4j.dra;

/** The health of one DRA device, as the kubelet reports it in the pod status. */
public enum DraHealthStatus {
  /** The device works. */
  HEALTHY,
  /** The device reported a problem. */
  UNHEALTHY,
  /** The driver cannot tell. */
  UNKNOWN
}
