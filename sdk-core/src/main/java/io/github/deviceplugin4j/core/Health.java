package io.github.deviceplugin4j.core;

/** Health of a device as the kubelet sees it. */
public enum Health {
  /** The device can be allocated. */
  HEALTHY("Healthy"),
  /** The device stays in capacity but is not allocatable. */
  UNHEALTHY("Unhealthy");

  private final String wireValue;

  Health(String wireValue) {
    this.wireValue = wireValue;
  }

  /**
   * The string the kubelet API uses for this health.
   *
   * @return {@code "Healthy"} or {@code "Unhealthy"}
   */
  public String wireValue() {
    return wireValue;
  }

  /**
   * Maps a boolean to a health.
   *
   * @param healthy whether the device is healthy
   * @return {@link #HEALTHY} or {@link #UNHEALTHY}
   */
  public static Health of(boolean healthy) {
    return healthy ? HEALTHY : UNHEALTHY;
  }
}
