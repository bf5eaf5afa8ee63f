package io.github.deviceplugin4j.testkit;

import java.time.Instant;
import java.util.Objects;

/**
 * One entry of the {@link FakeKubelet}'s event log: every RPC in either direction, every state
 * change.
 *
 * @param time when it happened
 * @param kind what happened
 * @param resource the resource it concerns, or an empty string
 * @param outcome whether it went well
 * @param detail a readable description (error text, device counts, paths)
 */
public record KubeletEvent(
    Instant time, Kind kind, String resource, Outcome outcome, String detail) {

  /** What happened. */
  public enum Kind {
    /** The fake kubelet started serving. */
    START,
    /** The fake kubelet stopped. */
    STOP,
    /** {@link FakeKubelet#restart()}. */
    RESTART,
    /** A {@code Register} call (legacy mode) or a plugin-watcher registration. */
    REGISTER,
    /** The first connection to a plugin's endpoint failed: it registered before serving. */
    ENDPOINT_NOT_READY,
    /** {@code GetDevicePluginOptions}. */
    GET_DEVICE_PLUGIN_OPTIONS,
    /** A {@code ListAndWatch} message, or the stream failing. */
    LIST_AND_WATCH,
    /**
     * The kubelet cancelled a {@code ListAndWatch} stream ({@link FakeKubelet#cancelListAndWatch}).
     */
    LIST_AND_WATCH_CANCELLED,
    /** The plugin's connection ended: its devices are unhealthy, the grace period runs. */
    DISCONNECT,
    /** The grace period ended without a new registration: the resource is gone. */
    RESOURCE_REMOVED,
    /** {@code GetPreferredAllocation}. */
    GET_PREFERRED_ALLOCATION,
    /** {@code Allocate}, or an allocation the kubelet refused before calling the plugin. */
    ALLOCATE,
    /** {@code PreStartContainer}. */
    PRE_START_CONTAINER,
    /** {@link FakeKubelet#release(String)}. */
    RELEASE,
    /** A socket appeared in the plugins registry directory. */
    PLUGIN_DISCOVERED,
    /** {@code pluginregistration.Registration/GetInfo}. */
    GET_INFO,
    /** {@code pluginregistration.Registration/NotifyRegistrationStatus}. */
    NOTIFY_REGISTRATION_STATUS,
    /** A registry socket vanished: the plugin is deregistered. */
    DEREGISTER,
    /** A {@code v1.PodResourcesLister} call. */
    POD_RESOURCES
  }

  /** Whether it went well. */
  public enum Outcome {
    /** It succeeded. */
    OK,
    /** It failed; the detail says why. */
    FAILED,
    /** Neither: a state change worth knowing. */
    INFO
  }

  /**
   * Checks the components.
   *
   * @param time see {@link #time()}
   * @param kind see {@link #kind()}
   * @param resource see {@link #resource()}
   * @param outcome see {@link #outcome()}
   * @param detail see {@link #detail()}
   */
  public KubeletEvent {
    Objects.requireNonNull(time, "time");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(outcome, "outcome");
    Objects.requireNonNull(detail, "detail");
  }

  /**
   * Whether this event is a failure.
   *
   * @return true when the outcome is {@link Outcome#FAILED}
   */
  public boolean failed() {
    return outcome == Outcome.FAILED;
  }

  @Override
  public String toString() {
    return time
        + " "
        + kind
        + (resource.isEmpty() ? "" : " " + resource)
        + " "
        + outcome
        + (detail.isEmpty() ? "" : ": " + detail);
  }
}
