package io.github.deviceplugin4j.dra;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What preparing one claim gave: its devices, or why it failed. A failure goes back to the kubelet
 * in that claim's entry only; the kubelet retries the claim later. Create with {@link
 * #prepared(List)} or {@link #failed(String)}.
 */
public final class PrepareResult {

  private final List<PreparedDevice> devices;
  private final String error;

  private PrepareResult(List<PreparedDevice> devices, String error) {
    this.devices = devices;
    this.error = error;
  }

  /**
   * The claim is prepared.
   *
   * @param devices what the container runtime must make available; may be empty
   * @return the result
   */
  public static PrepareResult prepared(List<PreparedDevice> devices) {
    return new PrepareResult(List.copyOf(Objects.requireNonNull(devices, "devices")), null);
  }

  /**
   * The claim is prepared.
   *
   * @param devices what the container runtime must make available
   * @return the result
   */
  public static PrepareResult prepared(PreparedDevice... devices) {
    return prepared(List.of(devices));
  }

  /**
   * Preparing the claim failed; the driver has undone whatever it did for it.
   *
   * @param error what went wrong and, if possible, what to do; not empty
   * @return the result
   */
  public static PrepareResult failed(String error) {
    Objects.requireNonNull(error, "error");
    if (error.isBlank()) {
      throw new IllegalArgumentException("error is blank: say why the claim could not be prepared");
    }
    return new PrepareResult(List.of(), error);
  }

  /**
   * The prepared devices; empty for a failure.
   *
   * @return the devices
   */
  public List<PreparedDevice> devices() {
    return devices;
  }

  /**
   * Why preparing failed.
   *
   * @return the error, empty when the claim is prepared
   */
  public Optional<String> error() {
    return Optional.ofNullable(error);
  }

  /**
   * Whether the claim is prepared.
   *
   * @return true unless preparing failed
   */
  public boolean isPrepared() {
    return error == null;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PrepareResult r
        && devices.equals(r.devices)
        && Objects.equals(error, r.error);
  }

  @Override
  public int hashCode() {
    return Objects.hash(devices, error);
  }

  @Override
  public String toString() {
    return isPrepared() ? "prepared" + devices : "failed: " + error;
  }
}
