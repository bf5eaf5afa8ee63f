package io.github.deviceplugin4j.testkit.cli;

import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.RegisterAttempt;
import io.github.deviceplugin4j.testkit.Registration;
import io.github.deviceplugin4j.testkit.internal.ResponseChecks;
import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** The conformance checks, run in order against one plugin process and one fake kubelet. */
final class ConformanceSuite {

  /** A check's id and what it verifies. */
  enum Check {
    REGISTERS("registers", "registers with the kubelet"),
    SERVES_BEFORE_REGISTERING("serves-before-registering", "serves its socket before registering"),
    REGISTER_FIELDS("register-fields", "registration request is valid"),
    OPTIONS_ANSWERED("options-answered", "answers GetDevicePluginOptions"),
    INITIAL_LIST("initial-list", "first device list within 1 s, unique IDs, valid health"),
    ALLOCATE_EACH_DEVICE("allocate-each-device", "every healthy device allocatable alone"),
    PREFERRED_ALLOCATION("preferred-allocation", "GetPreferredAllocation answer is valid"),
    UNKNOWN_DEVICE_REFUSED("unknown-device-refused", "refuses an unknown device ID"),
    KEEPS_SERVING_AFTER_CANCEL(
        "keeps-serving-after-cancel", "serves after the stream is cancelled"),
    RE_REGISTERS_AFTER_RESTART(
        "re-registers-after-restart", "re-registers within 5 s of a restart"),
    LIST_UNDER_4MIB("list-under-4mib", "device lists stay under the 4 MiB limit"),
    REMOVES_SOCKET_ON_SIGTERM("removes-socket-on-sigterm", "removes its socket on SIGTERM");

    final String id;
    final String title;

    Check(String id, String title) {
      this.id = id;
      this.title = title;
    }

    static Optional<Check> byId(String id) {
      for (Check c : values()) {
        if (c.id.equals(id)) {
          return Optional.of(c);
        }
      }
      return Optional.empty();
    }
  }

  enum Verdict {
    PASS,
    FAIL,
    SKIP
  }

  record Result(Check check, Verdict verdict, long millis, String message) {}

  static final Duration RESTART_LIMIT = Duration.ofSeconds(5);
  static final Duration INITIAL_LIST_LIMIT = Duration.ofSeconds(1);
  static final Duration SIGTERM_LIMIT = Duration.ofSeconds(10);
  static final int MAX_DEVICES_ALLOCATED = 256;
  static final String UNKNOWN_ID = "deviceplugin4j-conformance-unknown-device";

  private final FakeKubelet kubelet;
  private final PluginProcess plugin;
  private final Optional<String> expectedResource;
  private final Duration registerTimeout;
  private final Set<Check> selected;
  private final Map<Check, Result> results = new LinkedHashMap<>();
  private String resource;
  private Registration registration;

  ConformanceSuite(
      FakeKubelet kubelet,
      PluginProcess plugin,
      Optional<String> expectedResource,
      Duration registerTimeout,
      Set<Check> selected) {
    this.kubelet = kubelet;
    this.plugin = plugin;
    this.expectedResource = expectedResource;
    this.registerTimeout = registerTimeout;
    this.selected = selected;
  }

  String resource() {
    return resource;
  }

  Optional<Registration> registration() {
    return Optional.ofNullable(registration);
  }

  List<Result> run() {
    boolean registered = run(Check.REGISTERS, this::registers);
    if (!registered) {
      // Explain an options failure, which makes a registration fail.
      run(Check.OPTIONS_ANSWERED, this::optionsAnsweredAfterFailure);
      for (Check c : Check.values()) {
        results.computeIfAbsent(
            c, k -> new Result(k, Verdict.SKIP, 0, "the plugin never registered"));
      }
      return ordered();
    }
    settle();
    run(Check.SERVES_BEFORE_REGISTERING, this::servesBeforeRegistering);
    run(Check.REGISTER_FIELDS, this::registerFields);
    run(Check.OPTIONS_ANSWERED, this::optionsAnswered);
    run(Check.INITIAL_LIST, this::initialList);
    run(Check.ALLOCATE_EACH_DEVICE, this::allocateEachDevice);
    run(Check.PREFERRED_ALLOCATION, this::preferredAllocation);
    run(Check.UNKNOWN_DEVICE_REFUSED, this::unknownDeviceRefused);
    run(Check.KEEPS_SERVING_AFTER_CANCEL, this::keepsServingAfterCancel);
    run(Check.RE_REGISTERS_AFTER_RESTART, this::reRegistersAfterRestart);
    run(Check.LIST_UNDER_4MIB, this::listUnder4Mib);
    run(Check.REMOVES_SOCKET_ON_SIGTERM, this::removesSocketOnSigterm);
    return ordered();
  }

  private List<Result> ordered() {
    List<Result> out = new ArrayList<>();
    for (Check c : Check.values()) {
      Result r = results.get(c);
      if (r != null) {
        out.add(r);
      }
    }
    return out;
  }

  /** Thrown by a check body to fail with a message. */
  private static final class CheckFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CheckFailed(String message) {
      super(message, null, false, false);
    }
  }

  /** Thrown by a check body to skip with a message. */
  private static final class CheckSkipped extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CheckSkipped(String message) {
      super(message, null, false, false);
    }
  }

  private interface Body {
    String run() throws Exception;
  }

  private boolean run(Check check, Body body) {
    if (check != Check.REGISTERS && !selected.contains(check)) {
      results.put(check, new Result(check, Verdict.SKIP, 0, "not selected (--checks)"));
      return true;
    }
    long t0 = System.nanoTime();
    Result r;
    try {
      String msg = body.run();
      r = new Result(check, Verdict.PASS, elapsed(t0), msg);
    } catch (CheckSkipped e) {
      r = new Result(check, Verdict.SKIP, elapsed(t0), e.getMessage());
    } catch (CheckFailed e) {
      String note = check == Check.REMOVES_SOCKET_ON_SIGTERM ? "" : exitNote();
      r = new Result(check, Verdict.FAIL, elapsed(t0), e.getMessage() + note);
    } catch (AssertionError e) {
      r = new Result(check, Verdict.FAIL, elapsed(t0), firstLine(e.getMessage()) + exitNote());
    } catch (Exception e) {
      r =
          new Result(
              check,
              Verdict.FAIL,
              elapsed(t0),
              e.getClass().getSimpleName() + ": " + firstLine(e.getMessage()) + exitNote());
    }
    results.put(check, r);
    return r.verdict() != Verdict.FAIL;
  }

  private String exitNote() {
    return plugin
        .exitCode()
        .map(c -> " (the plugin process exited with code " + c + ")")
        .orElse("");
  }

  private static long elapsed(long t0) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }

  static String firstLine(String s) {
    if (s == null) {
      return "";
    }
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  private static CheckFailed fail(String message) {
    return new CheckFailed(message);
  }

  // --- checks ----------------------------------------------------------------------------------

  private String registers() {
    long deadline = System.nanoTime() + registerTimeout.toNanos();
    Predicate<KubeletEvent> ok =
        e ->
            e.kind() == Kind.REGISTER
                && e.outcome() == Outcome.OK
                && expectedResource.map(e.resource()::equals).orElse(true);
    while (true) {
      Optional<KubeletEvent> found = kubelet.events().stream().filter(ok).findFirst();
      if (found.isPresent()) {
        resource = found.get().resource();
        registration = kubelet.awaitRegistration(resource, Duration.ofSeconds(1));
        return "registered "
            + resource
            + " in "
            + Duration.between(plugin.startedAt(), registration.at()).toMillis()
            + " ms after the process started ("
            + (registration.mode() == Registration.Mode.LEGACY
                ? "legacy Register"
                : "plugin watcher")
            + ", endpoint "
            + registration.endpoint()
            + ")";
      }
      if (plugin.exitCode().isPresent()) {
        throw fail("the plugin process exited before registering" + rejections());
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw fail(
            "no registration"
                + expectedResource.map(r -> " of " + r).orElse("")
                + " within "
                + registerTimeout.toSeconds()
                + " s"
                + rejections());
      }
      try {
        kubelet.awaitEvent(ok, Duration.ofNanos(Math.min(left, 100_000_000L)));
      } catch (AssertionError timeoutSlice) {
        // check the process and the deadline again
      }
    }
  }

  private String rejections() {
    List<String> errors =
        kubelet.events().stream()
            .filter(e -> (e.kind() == Kind.REGISTER || e.kind() == Kind.GET_INFO) && e.failed())
            .map(e -> e.resource() + ": " + e.detail())
            .toList();
    return errors.isEmpty() ? "" : "; the kubelet refused: " + String.join(" | ", errors);
  }

  /**
   * Waits (quietly, whatever checks are selected) until the first device list arrived or the stream
   * failed, so later checks see the plugin's devices.
   */
  private void settle() {
    try {
      kubelet.awaitEvent(
          e ->
              e.kind() == Kind.LIST_AND_WATCH
                  && e.resource().equals(resource)
                  && !e.time().isBefore(registration.at()),
          INITIAL_LIST_LIMIT.multipliedBy(3));
    } catch (AssertionError e) {
      // the initial-list check reports this
    }
  }

  private String optionsAnsweredAfterFailure() {
    Optional<KubeletEvent> failed =
        kubelet.events().stream()
            .filter(e -> e.kind() == Kind.GET_DEVICE_PLUGIN_OPTIONS && e.failed())
            .findFirst();
    if (failed.isPresent()) {
      throw fail(failed.get().detail());
    }
    throw new CheckSkipped("the plugin never registered");
  }

  private String servesBeforeRegistering() {
    Optional<KubeletEvent> notReady =
        kubelet.events().stream()
            .filter(e -> e.kind() == Kind.ENDPOINT_NOT_READY && e.resource().equals(resource))
            .filter(e -> !e.time().isAfter(registration.at()))
            .findFirst();
    if (notReady.isPresent()) {
      throw fail(notReady.get().detail());
    }
    return "the first connection to the endpoint succeeded";
  }

  private String registerFields() {
    List<String> problems = new ArrayList<>();
    for (KubeletEvent e : kubelet.events()) {
      if ((e.kind() == Kind.REGISTER || e.kind() == Kind.GET_INFO) && e.failed()) {
        problems.add("a registration was refused: " + e.detail());
      }
    }
    String note = "";
    if (registration.mode() == Registration.Mode.LEGACY) {
      RegisterAttempt accepted =
          kubelet.registerAttempts().stream()
              .filter(a -> a.accepted() && a.resourceName().equals(resource))
              .findFirst()
              .orElseThrow(() -> fail("no accepted Register request for " + resource));
      if (!accepted.version().equals(FakeKubelet.V1BETA1)) {
        problems.add("version " + accepted.version() + " instead of v1beta1");
      }
      String ep = accepted.endpoint();
      if (ep.isEmpty() || ep.contains("/")) {
        problems.add(
            "endpoint \""
                + ep
                + "\" is not a plain file name; the kubelet joins it to the plugin directory");
      } else if (ep.equals(FakeKubelet.KUBELET_SOCKET)) {
        problems.add("endpoint is the kubelet's own socket name");
      }
      if (accepted.optionsSet()
          && (accepted.preStartRequired() != registration.preStartRequired()
              || accepted.preferredAllocationAvailable()
                  != registration.preferredAllocationAvailable())) {
        note =
            "; note: RegisterRequest.options differ from GetDevicePluginOptions (the kubelet"
                + " uses the latter)";
      }
      if (!problems.isEmpty()) {
        throw fail(String.join("; ", problems));
      }
      return "version "
          + accepted.version()
          + ", endpoint "
          + ep
          + ", resource name "
          + resource
          + note;
    }
    if (!problems.isEmpty()) {
      throw fail(String.join("; ", problems));
    }
    return "plugin info accepted: type DevicePlugin, name "
        + resource
        + ", version "
        + registration.version();
  }

  private String optionsAnswered() {
    return "pre_start_required="
        + registration.preStartRequired()
        + ", get_preferred_allocation_available="
        + registration.preferredAllocationAvailable();
  }

  private String initialList() {
    KubeletEvent first;
    try {
      first =
          kubelet.awaitEvent(
              e ->
                  e.kind() == Kind.LIST_AND_WATCH
                      && e.outcome() == Outcome.OK
                      && e.resource().equals(resource),
              remaining(registration.at(), INITIAL_LIST_LIMIT));
    } catch (AssertionError e) {
      throw fail(
          "no device list within "
              + INITIAL_LIST_LIMIT.toMillis()
              + " ms of the registration; the kubelet has no devices until the first list");
    }
    long after = Duration.between(registration.at(), first.time()).toMillis();
    if (after > INITIAL_LIST_LIMIT.toMillis()) {
      throw fail("the first device list came " + after + " ms after the registration");
    }
    List<DeviceState> devices = kubelet.devices(resource);
    List<String> problems = ResponseChecks.deviceListProblems(devices);
    if (!problems.isEmpty()) {
      throw fail(String.join("; ", problems));
    }
    long healthy = devices.stream().filter(DeviceState::healthy).count();
    return devices.size()
        + " devices ("
        + healthy
        + " healthy) "
        + after
        + " ms after the registration"
        + (devices.isEmpty() ? "; note: no devices, so the allocation checks prove little" : "");
  }

  private static Duration remaining(Instant from, Duration limit) {
    Duration left = limit.minus(Duration.between(from, Instant.now()));
    return left.isNegative() ? Duration.ZERO : left;
  }

  private List<String> healthyIds() {
    return kubelet.devices(resource).stream()
        .filter(DeviceState::healthy)
        .map(DeviceState::id)
        .toList();
  }

  private String allocateEachDevice() {
    List<String> healthy = healthyIds();
    if (healthy.isEmpty()) {
      throw new CheckSkipped("the plugin reports no healthy devices");
    }
    List<String> tried = healthy.subList(0, Math.min(healthy.size(), MAX_DEVICES_ALLOCATED));
    List<String> problems = new ArrayList<>();
    for (String id : tried) {
      try {
        Allocation a = kubelet.allocate(resource, id);
        for (String p : a.problems()) {
          problems.add(id + ": " + p);
        }
        kubelet.release(a.podUid());
      } catch (AllocationException e) {
        problems.add(id + ": " + e.getMessage());
      }
      if (!problems.isEmpty()) {
        break; // one broken device shows the pattern; the rest likely repeat it
      }
    }
    if (!problems.isEmpty()) {
      throw fail(String.join("; ", problems));
    }
    return tried.size()
        + " of "
        + healthy.size()
        + " healthy devices allocated alone; every response well-formed"
        + (registration.preStartRequired() ? "; PreStartContainer answered" : "");
  }

  private String preferredAllocation() {
    if (!registration.preferredAllocationAvailable()) {
      throw new CheckSkipped("the plugin does not offer GetPreferredAllocation");
    }
    List<String> healthy = healthyIds();
    if (healthy.isEmpty()) {
      throw new CheckSkipped("the plugin reports no healthy devices");
    }
    int n = Math.min(2, healthy.size());
    try {
      Allocation a = kubelet.allocate(resource, n);
      kubelet.release(a.podUid());
      return "asked for " + n + " of " + healthy.size() + ", got " + a.deviceIds();
    } catch (AllocationException e) {
      throw fail(e.getMessage());
    }
  }

  private String unknownDeviceRefused() {
    try {
      Allocation a = kubelet.allocate(resource, UNKNOWN_ID);
      kubelet.release(a.podUid());
    } catch (AllocationException e) {
      if (e.reason() != AllocationException.Reason.RPC_FAILED) {
        throw fail(e.getMessage());
      }
      return "refused with "
          + e.code()
          + (e.code() == Status.Code.INVALID_ARGUMENT
              ? ""
              : " (INVALID_ARGUMENT is the usual code for a bad request)")
          + ": "
          + e.description();
    }
    throw fail("Allocate accepted the unknown device ID \"" + UNKNOWN_ID + "\"");
  }

  private String keepsServingAfterCancel() {
    Instant before = Instant.now();
    kubelet.cancelListAndWatch(resource);
    try {
      kubelet.awaitEvent(
          e ->
              e.kind() == Kind.LIST_AND_WATCH
                  && e.resource().equals(resource)
                  && e.outcome() == Outcome.OK
                  && !e.time().isBefore(before),
          INITIAL_LIST_LIMIT);
    } catch (AssertionError e) {
      throw fail(
          "no device list on the new stream within "
              + INITIAL_LIST_LIMIT.toMillis()
              + " ms after the kubelet cancelled the old one");
    }
    if (kubelet.registration(resource).isEmpty()) {
      throw fail("the plugin's connection ended after the cancelled stream");
    }
    List<String> healthy = healthyIds();
    if (!healthy.isEmpty()) {
      try {
        Allocation a = kubelet.allocate(resource, healthy.get(0));
        kubelet.release(a.podUid());
      } catch (AllocationException e) {
        throw fail("Allocate failed after the cancelled stream: " + e.getMessage());
      }
    }
    return "a new stream got a device list"
        + (healthy.isEmpty() ? "" : " and Allocate still works");
  }

  private String reRegistersAfterRestart() {
    Mark restarted = kubelet.restart();
    Registration again;
    try {
      again = kubelet.awaitRegistration(resource, restarted, RESTART_LIMIT);
    } catch (AssertionError e) {
      throw fail(
          "no registration within "
              + RESTART_LIMIT.toSeconds()
              + " s after the kubelet restarted (its socket was deleted and served again)");
    }
    registration = again;
    long ms = (again.nanos() - restarted.nanos()) / 1_000_000;
    return "re-registered " + ms + " ms after the restart";
  }

  private String listUnder4Mib() {
    Optional<KubeletEvent> over =
        kubelet.events().stream()
            .filter(
                e ->
                    e.kind() == Kind.LIST_AND_WATCH
                        && e.failed()
                        && e.resource().equals(resource)
                        && e.detail().contains("4 MiB"))
            .findFirst();
    if (over.isPresent()) {
      throw fail(over.get().detail());
    }
    long largest = kubelet.largestDeviceListBytes(resource);
    return "largest list "
        + largest
        + " bytes, limit "
        + UdsTransport.MAX_INBOUND_MESSAGE_SIZE
        + " ("
        + String.format("%.2f", 100.0 * largest / UdsTransport.MAX_INBOUND_MESSAGE_SIZE)
        + " %)";
  }

  private String removesSocketOnSigterm() throws InterruptedException {
    List<Path> sockets = new ArrayList<>();
    kubelet.registrations().stream()
        .filter(r -> r.resourceName().equals(resource))
        .map(r -> Path.of(r.endpoint()))
        .distinct()
        .forEach(sockets::add);
    if (plugin.exitCode().isPresent()) {
      throw fail("the plugin process had already exited");
    }
    long t0 = System.nanoTime();
    Optional<Integer> code = plugin.terminate(SIGTERM_LIMIT);
    long ms = elapsed(t0);
    if (code.isEmpty()) {
      throw fail("the process did not exit within " + SIGTERM_LIMIT.toSeconds() + " s of SIGTERM");
    }
    List<Path> left = sockets.stream().filter(Files::exists).toList();
    if (!left.isEmpty()) {
      throw fail(
          "exited with code "
              + code.get()
              + " but left its socket behind: "
              + left
              + " (a stale socket makes the next start fail with \"address already in use\")");
    }
    return "exited with code " + code.get() + " " + ms + " ms after SIGTERM; socket removed";
  }
}
