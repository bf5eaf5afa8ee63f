package io.github.deviceplugin4j.testkit;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * One entry of the {@link FakeKubelet}'s event log: every RPC in either direction, every state
 * change. Events are numbered in the order they happened ({@link #seq()}), so a test can take a
 * {@link FakeKubelet#mark()} and wait for what happens after it without racing a fast plugin.
 *
 * <p>The typed fields ({@link #devices()}, {@link #healthy()}, {@link #bytes()}, {@link
 * #endpoint()}, {@link #version()}, {@link #allocatable()}) are present on the kinds that carry
 * them and empty otherwise; {@link #detail()} is for people.
 *
 * @param seq position in the log: 1 for the first event, one more for each next one
 * @param nanos {@link System#nanoTime()} when it happened, to measure intervals
 * @param time when it happened (wall clock)
 * @param kind what happened
 * @param resource the resource it concerns, or an empty string
 * @param outcome whether it went well
 * @param detail a readable description (error text, device counts, paths)
 * @param devices {@link Kind#LIST_AND_WATCH}: devices in the list; {@link Kind#DISCONNECT} and
 *     {@link Kind#RESOURCE_HEALTH}: the resource's capacity
 * @param healthy {@link Kind#LIST_AND_WATCH}: healthy devices in the list
 * @param bytes {@link Kind#LIST_AND_WATCH}: serialized size of the message
 * @param endpoint the plugin socket involved: the client that sent a list or whose stream ended,
 *     the registered endpoint, the endpoint that was stopped
 * @param version {@link Kind#REGISTER}: the API version of an accepted registration
 * @param allocatable {@link Kind#DISCONNECT} and {@link Kind#RESOURCE_HEALTH}: the resource's
 *     allocatable count afterwards
 */
public record KubeletEvent(
    long seq,
    long nanos,
    Instant time,
    Kind kind,
    String resource,
    Outcome outcome,
    String detail,
    OptionalInt devices,
    OptionalInt healthy,
    OptionalLong bytes,
    Optional<String> endpoint,
    Optional<String> version,
    OptionalInt allocatable) {

  /** What happened. */
  public enum Kind {
    /** The fake kubelet started serving. */
    START,
    /** The fake kubelet stopped. */
    STOP,
    /**
     * {@link FakeKubelet#restart()}: stopping ({@link Outcome#INFO}), then serving {@code
     * kubelet.sock} again ({@link Outcome#OK}).
     */
    RESTART,
    /** A {@code Register} call (legacy mode) or a plugin-watcher registration. */
    REGISTER,
    /** The first connection to a plugin's endpoint failed: it registered before serving. */
    ENDPOINT_NOT_READY,
    /** {@code GetDevicePluginOptions}. */
    GET_DEVICE_PLUGIN_OPTIONS,
    /** A {@code ListAndWatch} message (from any client, current or superseded), or a stream end. */
    LIST_AND_WATCH,
    /**
     * The kubelet cancelled a {@code ListAndWatch} stream ({@link FakeKubelet#cancelListAndWatch}).
     */
    LIST_AND_WATCH_CANCELLED,
    /**
     * The kubelet's {@code PluginDisconnected}: a client's stream ended (or it was deregistered or
     * the kubelet restarted); the resource's healthy devices turned unhealthy, its current endpoint
     * is stopped, the grace period runs.
     */
    DISCONNECT,
    /**
     * The resource's availability changed: its allocatable count, its capacity, or whether its
     * current endpoint is stopped. The journal behind {@link FakeKubelet#unhealthyWindows}.
     */
    RESOURCE_HEALTH,
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
    POD_RESOURCES,
    /**
     * A DRA driver's registration through the plugins registry: accepted ({@link Outcome#OK}, with
     * the endpoint and the chosen service in {@link KubeletEvent#version()}) or refused.
     */
    DRA_REGISTER,
    /** A DRA driver's registry socket vanished, or a restart dropped it: the plugin is removed. */
    DRA_DEREGISTER,
    /** {@code NodePrepareResources} (or a prepare the kubelet answered from its cache). */
    DRA_PREPARE,
    /** {@code NodeUnprepareResources}. */
    DRA_UNPREPARE,
    /**
     * {@code NodeWatchResources}: a health message (the resource is the driver, {@link
     * KubeletEvent#devices()} the number of devices in it), a stream end, or a driver that does not
     * serve health ({@code UNIMPLEMENTED}, accepted).
     */
    DRA_HEALTH,
    /**
     * The DRA registration handler deleted the node's ResourceSlices at start or restart (only with
     * a wiper set: {@link FakeKubelet.Builder#draResourceSliceWiper(Runnable)}).
     */
    DRA_SLICES_WIPED
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
   * @param seq see {@link #seq()}
   * @param nanos see {@link #nanos()}
   * @param time see {@link #time()}
   * @param kind see {@link #kind()}
   * @param resource see {@link #resource()}
   * @param outcome see {@link #outcome()}
   * @param detail see {@link #detail()}
   * @param devices see {@link #devices()}
   * @param healthy see {@link #healthy()}
   * @param bytes see {@link #bytes()}
   * @param endpoint see {@link #endpoint()}
   * @param version see {@link #version()}
   * @param allocatable see {@link #allocatable()}
   */
  public KubeletEvent {
    Objects.requireNonNull(time, "time");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(resource, "resource");
    Objects.requireNonNull(outcome, "outcome");
    Objects.requireNonNull(detail, "detail");
    Objects.requireNonNull(devices, "devices");
    Objects.requireNonNull(healthy, "healthy");
    Objects.requireNonNull(bytes, "bytes");
    Objects.requireNonNull(endpoint, "endpoint");
    Objects.requireNonNull(version, "version");
    Objects.requireNonNull(allocatable, "allocatable");
  }

  /**
   * Whether this event is a failure.
   *
   * @return true when the outcome is {@link Outcome#FAILED}
   */
  public boolean failed() {
    return outcome == Outcome.FAILED;
  }

  /**
   * Whether this event happened after a mark was taken.
   *
   * @param mark a mark from {@link FakeKubelet#mark()}
   * @return true when this event is newer than the mark
   */
  public boolean isAfter(Mark mark) {
    return seq > mark.seq();
  }

  @Override
  public String toString() {
    return "#"
        + seq
        + " "
        + time
        + " "
        + kind
        + (resource.isEmpty() ? "" : " " + resource)
        + " "
        + outcome
        + (detail.isEmpty() ? "" : ": " + detail);
  }

  /** The typed fields an event carries; package-private builder used by the fake. */
  static final class Facts {
    static final Facts NONE = new Facts();
    OptionalInt devices = OptionalInt.empty();
    OptionalInt healthy = OptionalInt.empty();
    OptionalLong bytes = OptionalLong.empty();
    Optional<String> endpoint = Optional.empty();
    Optional<String> version = Optional.empty();
    OptionalInt allocatable = OptionalInt.empty();

    static Facts of() {
      return new Facts();
    }

    Facts devices(int n) {
      devices = OptionalInt.of(n);
      return this;
    }

    Facts healthy(int n) {
      healthy = OptionalInt.of(n);
      return this;
    }

    Facts bytes(long n) {
      bytes = OptionalLong.of(n);
      return this;
    }

    Facts endpoint(Object socket) {
      endpoint = Optional.of(String.valueOf(socket));
      return this;
    }

    Facts version(String v) {
      version = Optional.of(v);
      return this;
    }

    Facts allocatable(int n) {
      allocatable = OptionalInt.of(n);
      return this;
    }
  }
}
