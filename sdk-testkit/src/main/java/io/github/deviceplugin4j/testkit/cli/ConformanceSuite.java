package io.github.deviceplugin4j.testkit.cli;

import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.DraClaim;
import io.github.deviceplugin4j.testkit.DraClaimResult;
import io.github.deviceplugin4j.testkit.DraKubelet;
import io.github.deviceplugin4j.testkit.DraRegistration;
import io.github.deviceplugin4j.testkit.DraResult;
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
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The conformance checks, run in order against one plugin process and one fake kubelet.
 *
 * <p>Each check has a {@link Level}: {@link Level#REQUIRED} checks are the kubelet's contract (a
 * plugin that fails one does not work, or stops working, on a node); {@link Level#RECOMMENDED}
 * checks are good practice that the kubelet does not enforce (its own reference stub plugin, in
 * kubernetes/kubernetes {@code pkg/kubelet/cm/devicemanager/plugin/v1beta1/stub.go}, fails some of
 * them). A failed recommended check is a {@link Verdict#WARN}, or a {@link Verdict#FAIL} in strict
 * mode.
 */
final class ConformanceSuite {

  /** How much a check matters. */
  enum Level {
    /** The kubelet's contract: a failure fails the run. */
    REQUIRED,
    /** Good practice the kubelet does not enforce: a failure warns, or fails in strict mode. */
    RECOMMENDED;

    String id() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** A check's id, level and what it verifies. */
  enum Check {
    // Required: without an accepted registration the kubelet never creates the resource.
    REGISTERS("registers", Level.REQUIRED, "registers with the kubelet"),
    // Required: the kubelet dials the endpoint once (blocking, 10 s) right after Register; only a
    // plugin that serves first is sure to be connected.
    SERVES_BEFORE_REGISTERING(
        "serves-before-registering", Level.REQUIRED, "serves its socket before registering"),
    // Required: the kubelet refuses an unsupported version or an invalid resource name, and joins
    // the endpoint to its plugin directory.
    REGISTER_FIELDS("register-fields", Level.REQUIRED, "registration request is valid"),
    // Required: the kubelet calls GetDevicePluginOptions on connect and drops the plugin on error.
    OPTIONS_ANSWERED("options-answered", Level.REQUIRED, "answers GetDevicePluginOptions"),
    // Required: the kubelet has no devices until the first list; duplicate IDs or bad health
    // strings corrupt its accounting.
    INITIAL_LIST(
        "initial-list", Level.REQUIRED, "first device list within 1 s, unique IDs, valid health"),
    // Required: the kubelet needs exactly one container response per request and hands paths,
    // permissions, env names and CDI names to the runtime, which fails the container on bad ones;
    // PreStartContainer must answer when pre_start_required is set (the kubelet cannot recover).
    ALLOCATE_EACH_DEVICE(
        "allocate-each-device", Level.REQUIRED, "every healthy device allocatable alone"),
    // Required when advertised: an error status from GetPreferredAllocation fails the pod's
    // admission (a wrong answer is tolerated: see preferred-allocation-valid).
    PREFERRED_ALLOCATION(
        "preferred-allocation", Level.REQUIRED, "GetPreferredAllocation answers without error"),
    // Recommended: the kubelet keeps the valid part of a wrong answer and fills up the rest itself,
    // so the plugin's preference is partly lost but nothing breaks.
    PREFERRED_ALLOCATION_VALID(
        "preferred-allocation-valid",
        Level.RECOMMENDED,
        "GetPreferredAllocation answer fits the request"),
    // Recommended: the kubelet only sends IDs the plugin listed; the kubelet's reference stub
    // plugin accepts any ID.
    UNKNOWN_DEVICE_REFUSED(
        "unknown-device-refused", Level.RECOMMENDED, "refuses an unknown device ID"),
    // Recommended: the kubelet picks healthy devices, but may reuse an init container's devices
    // without a health check; refusing protects workloads from broken hardware.
    UNHEALTHY_DEVICE_REFUSED(
        "unhealthy-device-refused", Level.RECOMMENDED, "refuses an unhealthy device ID"),
    // Recommended: the real kubelet ends a stream only when it drops the whole connection, but a
    // plugin that dies on a cancelled call dies on any transport hiccup too.
    KEEPS_SERVING_AFTER_CANCEL(
        "keeps-serving-after-cancel", Level.RECOMMENDED, "serves after the stream is cancelled"),
    // Required: a kubelet restart deletes the plugin's socket; a plugin that does not serve and
    // register again loses its resource for good.
    // The kubelet accepts a registration whenever it comes; a late one (over 5 s) leaves the
    // resource without devices meanwhile, so it passes with a warning that gives the time.
    RE_REGISTERS_AFTER_RESTART(
        "re-registers-after-restart",
        Level.REQUIRED,
        "registers again after a kubelet restart (late: warning; never: failure)"),
    // Required: the kubelet receives with gRPC's 4 MiB limit; a larger list ends the stream and
    // disconnects the resource.
    LIST_UNDER_4MIB("list-under-4mib", Level.REQUIRED, "device lists stay under the 4 MiB limit"),
    // Recommended: the kubelet deletes stale sockets itself on start; a stale socket only breaks
    // the plugin's own next start ("address already in use") if it does not delete it first.
    REMOVES_SOCKET_ON_SIGTERM(
        "removes-socket-on-sigterm", Level.RECOMMENDED, "removes its socket on SIGTERM"),

    // DRA drivers (conform --dra). Required: the kubelet's DRA handler refuses the registration.
    DRA_REGISTERS("dra-registers", Level.REQUIRED, "DRA: registers through plugins_registry", true),
    // Required: the kubelet calls only the service it chose from the plugin's list.
    DRA_SERVES_SERVICE(
        "dra-serves-service", Level.REQUIRED, "DRA: serves the service the kubelet chose", true),
    // Required: a missing entry fails the pod ("skipped N ResourceClaims"); a call error fails
    // every claim of the pod where a per-claim error names the one that is wrong.
    DRA_PREPARE_EACH_CLAIM(
        "dra-prepare-each-claim",
        Level.REQUIRED,
        "DRA: prepare answers every claim, errors per claim",
        true),
    // Recommended: the kubelet repeats a prepare after its restarts; the same answer keeps the
    // containers' CDI devices stable.
    DRA_PREPARE_IDEMPOTENT(
        "dra-prepare-idempotent", Level.RECOMMENDED, "DRA: a repeated prepare answers alike", true),
    // Required: the kubelet unprepares claims the driver may not know (a retry, a lost state):
    // an error there keeps the pod from being cleaned up.
    DRA_UNPREPARE_UNKNOWN(
        "dra-unprepare-unknown",
        Level.REQUIRED,
        "DRA: unprepare of an unknown claim succeeds",
        true),
    // Recommended: without NodeWatchResources the kubelet reports no device health in pods.
    DRA_HEALTH_STREAM(
        "dra-health-stream", Level.RECOMMENDED, "DRA: serves NodeWatchResources", true),
    // Required: after a kubelet restart the plugin manager must find the registration socket again.
    DRA_RE_REGISTERS_AFTER_RESTART(
        "dra-re-registers-after-restart",
        Level.REQUIRED,
        "DRA: registered again after a restart (late: warning; never: failure)",
        true),
    // Required: the API server refuses a slice that breaks its validation rules, and the node's
    // devices are then not schedulable. Needs an API server (deviceplugin4j-dra-conform's jar).
    DRA_SLICES_VALID(
        "dra-slices-valid",
        Level.REQUIRED,
        "DRA: publishes ResourceSlices the API server accepts (needs an API server)",
        true),
    // Recommended: a taint keeps new claims off a failed device and says why; a device left out
    // of the slices (the fallback where the API server drops taints) warns. Needs an API server
    // and --make-unhealthy.
    DRA_UNHEALTHY_TAINTED(
        "dra-unhealthy-tainted",
        Level.RECOMMENDED,
        "DRA: taints a device --make-unhealthy breaks (left out: warning; needs an API server)",
        true);

    final String id;
    final Level level;
    final String title;
    final boolean dra;

    Check(String id, Level level, String title) {
      this(id, level, title, false);
    }

    Check(String id, Level level, String title, boolean dra) {
      this.id = id;
      this.level = level;
      this.title = title;
      this.dra = dra;
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

  /** A check's outcome. */
  enum Verdict {
    PASS,
    /** A required check failed, or a recommended one in strict mode. */
    FAIL,
    /**
     * A recommended check failed (not strict), or a check passed in a way the kubelet accepts but a
     * node notices (a late re-registration).
     */
    WARN,
    SKIP
  }

  /**
   * A check's outcome for one resource (or driver).
   *
   * @param resource the resource the check ran on; empty for a check of the whole plugin
   */
  record Result(Check check, String resource, Verdict verdict, long millis, String message) {}

  /** The results when the plugin command could not start at all. */
  static List<Result> notStarted(String message, boolean dra) {
    List<Result> out = new ArrayList<>();
    for (Check c : Check.values()) {
      if (c.dra != dra) {
        continue;
      }
      boolean first = c == (dra ? Check.DRA_REGISTERS : Check.REGISTERS);
      out.add(
          new Result(
              c,
              "",
              first ? Verdict.FAIL : Verdict.SKIP,
              0,
              first ? message : "the plugin command could not start"));
    }
    return out;
  }

  static final Duration RESTART_LIMIT = Duration.ofSeconds(5);

  /** How long re-registers-after-restart waits before it calls the plugin gone for good. */
  static final Duration DEFAULT_RESTART_TIMEOUT = Duration.ofSeconds(60);

  static final Duration INITIAL_LIST_LIMIT = Duration.ofSeconds(1);
  static final Duration SIGTERM_LIMIT = Duration.ofSeconds(10);
  static final Duration DRA_HEALTH_LIMIT = Duration.ofSeconds(2);
  static final int MAX_DEVICES_ALLOCATED = 256;
  static final String UNKNOWN_ID = "deviceplugin4j-conformance-unknown-device";

  private final FakeKubelet kubelet;
  private final PluginProcess plugin;
  private final Optional<String> expectedResource;
  private final Duration registerTimeout;
  private final Set<Check> selected;
  private final boolean strict;
  // The time limits above multiplied by --time-scale: a test of the suite on a starved machine
  // widens them; a vendor's run keeps the kubelet's own figures (scale 1).
  private final Duration restartLimit;
  private final Duration initialListLimit;
  private final Duration sigtermLimit;
  private final Duration draHealthLimit;
  private final Duration restartTimeout;
  private final Map<String, Result> results = new LinkedHashMap<>();
  // The resources checked, in registration order, and the one the per-resource checks run on.
  private final List<String> resources = new ArrayList<>();
  private String resource;
  private Registration registration;
  private Optional<String> preferredCorrection = Optional.empty();
  private DraSliceChecks sliceChecks = DraSliceChecks.none();

  ConformanceSuite(
      FakeKubelet kubelet,
      PluginProcess plugin,
      Optional<String> expectedResource,
      Duration registerTimeout,
      Set<Check> selected,
      boolean strict,
      int timeScale,
      Duration restartTimeout) {
    this.restartLimit = RESTART_LIMIT.multipliedBy(timeScale);
    this.restartTimeout = restartTimeout;
    this.initialListLimit = INITIAL_LIST_LIMIT.multipliedBy(timeScale);
    this.sigtermLimit = SIGTERM_LIMIT.multipliedBy(timeScale);
    this.draHealthLimit = DRA_HEALTH_LIMIT.multipliedBy(timeScale);
    this.kubelet = kubelet;
    this.plugin = plugin;
    this.expectedResource = expectedResource;
    this.registerTimeout = registerTimeout;
    this.selected = selected;
    this.strict = strict;
  }

  /** The checks that read the driver's ResourceSlices (skipped without an API server). */
  ConformanceSuite sliceChecks(DraSliceChecks checks) {
    this.sliceChecks = checks;
    return this;
  }

  String resource() {
    return resource;
  }

  /** Every resource (or the driver) the checks ran on, in registration order. */
  List<String> resources() {
    return List.copyOf(resources);
  }

  /** Resources the plugin registered that were not checked (--resource, or registered late). */
  List<String> uncheckedResources() {
    return kubelet.registrations().stream()
        .map(Registration::resourceName)
        .distinct()
        .filter(r -> !resources.contains(r))
        .toList();
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
        if (!c.dra && !results.containsKey(key(c, ""))) {
          results.put(
              key(c, ""), new Result(c, "", Verdict.SKIP, 0, "the plugin never registered"));
        }
      }
      return ordered();
    }
    // Every resource the plugin registered is checked, each on its own; one registered while the
    // checks of another ran is picked up after them.
    for (int i = 0; i < resources.size(); i++) {
      select(resources.get(i));
      settle();
      run(Check.SERVES_BEFORE_REGISTERING, this::servesBeforeRegistering);
      run(Check.REGISTER_FIELDS, this::registerFields);
      run(Check.OPTIONS_ANSWERED, this::optionsAnswered);
      run(Check.INITIAL_LIST, this::initialList);
      run(Check.ALLOCATE_EACH_DEVICE, this::allocateEachDevice);
      run(Check.PREFERRED_ALLOCATION, this::preferredAllocation);
      run(Check.PREFERRED_ALLOCATION_VALID, this::preferredAllocationValid);
      run(Check.UNKNOWN_DEVICE_REFUSED, this::unknownDeviceRefused);
      run(Check.UNHEALTHY_DEVICE_REFUSED, this::unhealthyDeviceRefused);
      run(Check.KEEPS_SERVING_AFTER_CANCEL, this::keepsServingAfterCancel);
      refreshResources();
    }
    // One kubelet restart; every resource must come back.
    resource = null;
    run(Check.RE_REGISTERS_AFTER_RESTART, this::reRegistersAfterRestart);
    for (String r : List.copyOf(resources)) {
      select(r);
      run(Check.LIST_UNDER_4MIB, this::listUnder4Mib);
    }
    resource = null;
    run(Check.REMOVES_SOCKET_ON_SIGTERM, this::removesSocketOnSigterm);
    return ordered();
  }

  /** Makes the per-resource checks run on {@code r}. */
  private void select(String r) {
    resource = r;
    registration =
        kubelet.registrations().stream()
            .filter(x -> x.resourceName().equals(r))
            .reduce((a, b) -> b)
            .orElseThrow();
  }

  private String key(Check c, String r) {
    return c.id + "\u0000" + (r == null ? "" : r);
  }

  private List<Result> ordered() {
    List<Result> out = new ArrayList<>();
    for (Check c : Check.values()) {
      for (Result r : results.values()) {
        if (r.check() == c) {
          out.add(r);
        }
      }
    }
    return out;
  }

  /** Thrown by a check body to fail with a message. */
  static final class CheckFailed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CheckFailed(String message) {
      super(message, null, false, false);
    }
  }

  /** Thrown by a check body to skip with a message. */
  static final class CheckSkipped extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CheckSkipped(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Thrown by a check body that passed the kubelet's contract in a way a node notices: a warning
   * whatever the check's level and {@code --strict}.
   */
  static final class CheckWarned extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CheckWarned(String message) {
      super(message, null, false, false);
    }
  }

  private interface Body {
    String run() throws Exception;
  }

  private boolean run(Check check, Body body) {
    String on = check == Check.REGISTERS || check == Check.DRA_REGISTERS ? "" : resource;
    on = on == null ? "" : on;
    if (check != Check.REGISTERS && check != Check.DRA_REGISTERS && !selected.contains(check)) {
      results.put(
          key(check, on), new Result(check, on, Verdict.SKIP, 0, "not selected (--checks)"));
      return true;
    }
    long t0 = System.nanoTime();
    Verdict failed = check.level == Level.RECOMMENDED && !strict ? Verdict.WARN : Verdict.FAIL;
    Result r;
    try {
      String msg = body.run();
      r = new Result(check, on, Verdict.PASS, elapsed(t0), msg);
    } catch (CheckSkipped e) {
      r = new Result(check, on, Verdict.SKIP, elapsed(t0), e.getMessage());
    } catch (CheckWarned e) {
      r = new Result(check, on, Verdict.WARN, elapsed(t0), e.getMessage());
    } catch (CheckFailed e) {
      String note = check == Check.REMOVES_SOCKET_ON_SIGTERM ? "" : exitNote();
      r = new Result(check, on, failed, elapsed(t0), e.getMessage() + note);
    } catch (AssertionError e) {
      r = new Result(check, on, failed, elapsed(t0), firstLine(e.getMessage()) + exitNote());
    } catch (Exception e) {
      r =
          new Result(
              check,
              on,
              failed,
              elapsed(t0),
              e.getClass().getSimpleName() + ": " + firstLine(e.getMessage()) + exitNote());
    }
    results.put(key(check, on), r);
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

  // --- waiting on the fake kubelet ---------------------------------------------------------------
  // The only two places the suite waits on the fake kubelet: a mark taken before acting, and waits
  // for what happened at or after it, so a plugin that answers within microseconds is never missed.

  /** Before anything the fake kubelet recorded. */
  private static final Mark BEGINNING = new Mark(0, Long.MIN_VALUE, Instant.MIN);

  /** A point in the fake kubelet's history: take it before acting, wait for what follows. */
  private Mark mark() {
    return kubelet.mark();
  }

  /** The first event at or after {@code mark} that matches; AssertionError on timeout. */
  private KubeletEvent awaitEvent(Mark mark, Predicate<KubeletEvent> p, Duration timeout) {
    return kubelet.awaitEvent(mark, p, timeout);
  }

  /** The first registration of the resource at or after {@code mark}; AssertionError on timeout. */
  private Registration awaitRegistration(Mark mark, Duration timeout) {
    return kubelet.awaitRegistration(resource, mark, timeout);
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
        registration = awaitRegistration(BEGINNING, initialListLimit);
        resources.add(resource);
        refreshResources();
        List<String> parts = new ArrayList<>();
        for (String r : resources) {
          Registration reg =
              kubelet.registrations().stream()
                  .filter(x -> x.resourceName().equals(r))
                  .findFirst()
                  .orElseThrow();
          parts.add(
              "registered "
                  + r
                  + " in "
                  + Duration.between(plugin.startedAt(), reg.at()).toMillis()
                  + " ms after the process started ("
                  + (reg.mode() == Registration.Mode.LEGACY ? "legacy Register" : "plugin watcher")
                  + ", endpoint "
                  + reg.endpoint()
                  + ")");
        }
        return String.join("; ", parts);
      }
      if (!kubelet.dra().registrations().isEmpty()) {
        throw fail(
            "the plugin registered as a DRA driver ("
                + kubelet.dra().registrations().get(0).driver()
                + "), not as a device plugin: run conform --dra for a DRA driver");
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
        awaitEvent(BEGINNING, ok, Duration.ofNanos(Math.min(left, 100_000_000L)));
      } catch (AssertionError timeoutSlice) {
        // check the process and the deadline again
      }
    }
  }

  /**
   * Adds the resources the plugin has registered since (all of them unless --resource names one): a
   * plugin with several resources registers them one after the other.
   */
  private void refreshResources() {
    if (expectedResource.isPresent()) {
      return;
    }
    for (Registration r : kubelet.registrations()) {
      if (!resources.contains(r.resourceName())) {
        resources.add(r.resourceName());
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
      awaitEvent(
          new Mark(registration.seq(), registration.nanos(), registration.at()),
          e -> e.kind() == Kind.LIST_AND_WATCH && e.resource().equals(resource),
          initialListLimit.multipliedBy(3));
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
            .filter(e -> e.seq() <= registration.seq())
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
          awaitEvent(
              BEGINNING,
              e ->
                  e.kind() == Kind.LIST_AND_WATCH
                      && e.outcome() == Outcome.OK
                      && e.resource().equals(resource),
              remaining(registration.at(), initialListLimit));
    } catch (AssertionError e) {
      throw fail(
          "no device list within "
              + initialListLimit.toMillis()
              + " ms of the registration; the kubelet has no devices until the first list");
    }
    long after = (first.nanos() - registration.nanos()) / 1_000_000;
    if (after > initialListLimit.toMillis()) {
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
        problems.add(id + ": " + e.getMessage() + hint(e));
        // A failed PreStartContainer leaves the device with its pod, as on a node.
        kubelet.allocations().stream()
            .filter(a -> a.resourceName().equals(resource) && a.deviceIds().contains(id))
            .forEach(a -> kubelet.release(a.podUid()));
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

  /** What the kubelet's text does not say: what the plugin should answer instead. */
  private static String hint(AllocationException e) {
    if (e.reason() == AllocationException.Reason.INVALID_RESPONSE && e.rpc().equals("Allocate")) {
      return " (the plugin answered no container response; the kubelet sends one container"
          + " request per call and needs exactly one response)";
    }
    return "";
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
    Mark before = mark();
    try {
      Allocation a = kubelet.allocate(resource, n);
      kubelet.release(a.podUid());
      preferredCorrection = correction(before);
      return "asked for "
          + n
          + " of "
          + healthy.size()
          + ", got "
          + a.deviceIds()
          + preferredCorrection.map(c -> "; note: the kubelet corrected the answer").orElse("");
    } catch (AllocationException e) {
      throw fail(e.getMessage());
    }
  }

  /** What the kubelet had to correct in a GetPreferredAllocation answer since the mark. */
  private Optional<String> correction(Mark since) {
    return kubelet.events().stream()
        .filter(
            e ->
                e.kind() == Kind.GET_PREFERRED_ALLOCATION
                    && e.resource().equals(resource)
                    && e.outcome() == Outcome.INFO
                    && e.isAfter(since))
        .map(KubeletEvent::detail)
        .findFirst();
  }

  private String preferredAllocationValid() {
    Result answered = results.get(key(Check.PREFERRED_ALLOCATION, resource));
    if (answered.verdict() == Verdict.SKIP) {
      throw new CheckSkipped(answered.message());
    }
    if (answered.verdict() != Verdict.PASS) {
      throw new CheckSkipped("GetPreferredAllocation failed (see preferred-allocation)");
    }
    if (preferredCorrection.isPresent()) {
      throw fail(preferredCorrection.get());
    }
    return "the answer had the requested size, IDs from available_deviceIDs, no repeats";
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

  private String unhealthyDeviceRefused() {
    Optional<String> unhealthy =
        kubelet.devices(resource).stream()
            .filter(d -> !d.healthy())
            .map(DeviceState::id)
            .findFirst();
    if (unhealthy.isEmpty()) {
      throw new CheckSkipped("the plugin reports no unhealthy devices");
    }
    try {
      Allocation a = kubelet.allocate(resource, unhealthy.get());
      kubelet.release(a.podUid());
    } catch (AllocationException e) {
      if (e.reason() != AllocationException.Reason.RPC_FAILED) {
        throw fail(e.getMessage());
      }
      return "refused " + unhealthy.get() + " with " + e.code() + ": " + e.description();
    }
    throw fail(
        "Allocate accepted the unhealthy device \""
            + unhealthy.get()
            + "\" (its container would get a device the plugin reports as broken)");
  }

  private String keepsServingAfterCancel() {
    Mark before = mark();
    kubelet.cancelListAndWatch(resource);
    try {
      awaitEvent(
          before,
          e ->
              e.kind() == Kind.LIST_AND_WATCH
                  && e.resource().equals(resource)
                  && e.outcome() == Outcome.OK,
          initialListLimit);
    } catch (AssertionError e) {
      throw fail(
          "no device list on the new stream within "
              + initialListLimit.toMillis()
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
    // restart() returns a mark taken before it acts: a plugin that registers again within
    // microseconds of kubelet.sock being served is still seen. The kubelet accepts a registration
    // whenever it comes (pkg/kubelet/cm/devicemanager/plugin/v1beta1/server.go has no deadline
    // for it): only one that never comes fails; one later than the 5 s a prompt plugin needs
    // warns with the time, since the resource has no devices until then.
    Mark restarted = kubelet.restart();
    long deadline = System.nanoTime() + restartTimeout.toNanos();
    List<String> prompt = new ArrayList<>();
    List<String> late = new ArrayList<>();
    List<String> never = new ArrayList<>();
    for (String r : resources) {
      Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
      try {
        Registration again = kubelet.awaitRegistration(r, restarted, left);
        long ms = Math.max(0, (again.nanos() - restarted.nanos()) / 1_000_000);
        (ms > restartLimit.toMillis() ? late : prompt).add(named(r, ms + " ms"));
      } catch (AssertionError e) {
        never.add(r);
      }
    }
    return restartVerdict(
        prompt, late, never, "(its socket was deleted and kubelet.sock served again)", false);
  }

  /** "X ms" alone for one resource; "resource X ms" when several are checked. */
  private String named(String r, String what) {
    return resources.size() == 1 ? what : r + " " + what;
  }

  /** The verdict of a re-registration check from who came back promptly, late and never. */
  private String restartVerdict(
      List<String> prompt, List<String> late, List<String> never, String what, boolean dra) {
    if (!never.isEmpty()) {
      throw fail(
          "never registered again: no registration of "
              + String.join(", ", never)
              + " within "
              + restartTimeout.toSeconds()
              + " s after the kubelet restarted"
              + (what.isEmpty() ? "" : " " + what)
              + "; on a node the resource stays without devices until the plugin is restarted"
              + (late.isEmpty() && prompt.isEmpty()
                  ? ""
                  : " (came back: " + String.join(", ", concat(prompt, late)) + ")"));
    }
    if (!late.isEmpty()) {
      throw new CheckWarned(
          "registered again late, "
              + String.join(", ", concat(prompt, late))
              + " after the restart (more than "
              + restartLimit.toSeconds()
              + " s): the kubelet accepts it, but until then the resource has no allocatable"
              + " devices and pods asking for it fail admission");
    }
    return (dra ? "registered again " : "re-registered ")
        + String.join(", ", prompt)
        + " after the restart";
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> out = new ArrayList<>(a);
    out.addAll(b);
    return out;
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
        .filter(r -> resources.contains(r.resourceName()))
        .map(r -> Path.of(r.endpoint()))
        .distinct()
        .forEach(sockets::add);
    if (plugin.exitCode().isPresent()) {
      throw fail("the plugin process had already exited");
    }
    long t0 = System.nanoTime();
    Optional<Integer> code = plugin.terminate(sigtermLimit);
    long ms = elapsed(t0);
    if (code.isEmpty()) {
      throw fail("the process did not exit within " + sigtermLimit.toSeconds() + " s of SIGTERM");
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

  // --- DRA ---------------------------------------------------------------------------------------

  private static final List<DraClaim> PROBE_CLAIMS =
      List.of(
          new DraClaim("deviceplugin4j-conformance", "conformance-uid-1", "conformance-claim-1"),
          new DraClaim("deviceplugin4j-conformance", "conformance-uid-2", "conformance-claim-2"));
  private DraResult firstPrepare;

  /** Runs the DRA checks against a driver process (the fake watches a plugins registry). */
  List<Result> runDra() {
    boolean registered = run(Check.DRA_REGISTERS, this::draRegisters);
    if (!registered) {
      for (Check c : Check.values()) {
        if (c.dra) {
          results.computeIfAbsent(
              key(c, ""), k -> new Result(c, "", Verdict.SKIP, 0, "the driver never registered"));
        }
      }
      return ordered();
    }
    run(Check.DRA_SERVES_SERVICE, this::draServesService);
    run(Check.DRA_PREPARE_EACH_CLAIM, this::draPrepareEachClaim);
    run(Check.DRA_PREPARE_IDEMPOTENT, this::draPrepareIdempotent);
    run(Check.DRA_UNPREPARE_UNKNOWN, this::draUnprepareUnknown);
    run(Check.DRA_HEALTH_STREAM, this::draHealthStream);
    run(Check.DRA_RE_REGISTERS_AFTER_RESTART, this::draReRegistersAfterRestart);
    run(Check.DRA_SLICES_VALID, () -> sliceChecks.slicesValid(resource));
    run(Check.DRA_UNHEALTHY_TAINTED, () -> sliceChecks.unhealthyTainted(resource));
    return ordered();
  }

  private static final String KNOWN_NAMES_HINT =
      "list \""
          + DraKubelet.V1_SERVICE
          + "\" and/or \""
          + DraKubelet.V1BETA1_SERVICE
          + "\" in PluginInfo.supported_versions, newest first (upstream's DRAPluginService"
          + " constants, not the full gRPC names such as"
          + " k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin)";

  private String draRegisters() {
    long deadline = System.nanoTime() + registerTimeout.toNanos();
    while (true) {
      Optional<DraRegistration> r =
          kubelet.dra().registrations().stream()
              .filter(x -> expectedResource.map(x.driver()::equals).orElse(true))
              .findFirst();
      if (r.isPresent()) {
        resource = r.get().driver();
        resources.add(resource);
        if (r.get().service().equals(DraKubelet.V1ALPHA3_FALLBACK_SERVICE)) {
          throw fail(
              "the registration lists no DRA service the kubelet knows, so a 1.32/1.33 kubelet"
                  + " falls back to "
                  + DraKubelet.V1ALPHA3_FALLBACK_SERVICE
                  + " and every NodePrepareResources fails Unimplemented (1.34 and newer refuse"
                  + " it): "
                  + KNOWN_NAMES_HINT);
        }
        return "registered "
            + resource
            + " (endpoint "
            + r.get().endpoint()
            + ", service "
            + r.get().service()
            + ")";
      }
      if (!kubelet.registerAttempts().isEmpty() || !kubelet.registrations().isEmpty()) {
        String what =
            !kubelet.registrations().isEmpty()
                ? kubelet.registrations().get(0).resourceName()
                : kubelet.registerAttempts().get(0).resourceName();
        throw fail(
            "the plugin registered as a device plugin ("
                + what
                + "), not as a DRA driver: run conform without --dra for a device plugin");
      }
      Optional<KubeletEvent> refused =
          kubelet.events().stream()
              .filter(e -> e.kind() == Kind.DRA_REGISTER && e.outcome() == Outcome.FAILED)
              .findFirst();
      if (refused.isPresent()) {
        String detail = refused.get().detail();
        throw fail(
            "the kubelet refused the registration: "
                + detail
                + (detail.contains("none of services supported") ? "; " + KNOWN_NAMES_HINT : ""));
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw fail(
            "no DRA registration"
                + expectedResource.map(d -> " of " + d).orElse("")
                + " within "
                + registerTimeout.toSeconds()
                + " s: create a registration socket in the plugins registry that answers GetInfo"
                + " with type DRAPlugin");
      }
      try {
        kubelet.awaitEvent(
            mark(),
            e -> e.kind() == Kind.DRA_REGISTER,
            Duration.ofNanos(Math.min(left, 200_000_000)));
      } catch (AssertionError e) {
        // poll again
      }
    }
  }

  private String draServesService() {
    DraResult r = kubelet.dra().nodePrepareResources(resource, List.of());
    if (r.callError().isPresent()) {
      throw fail(
          "NodePrepareResources with no claims failed on "
              + kubelet.dra().registration(resource).map(DraRegistration::service).orElse("?")
              + ": "
              + r.callError().get());
    }
    return "NodePrepareResources answered on "
        + kubelet.dra().registration(resource).map(DraRegistration::service).orElse("?");
  }

  private String draPrepareEachClaim() {
    DraResult r = kubelet.dra().nodePrepareResources(resource, PROBE_CLAIMS);
    firstPrepare = r;
    if (r.callError().isPresent()) {
      throw fail(
          "the call failed as a whole ("
              + r.callError().get()
              + "): report a problem with one claim in its entry's error, so the kubelet names the"
              + " claim");
    }
    List<String> missing =
        PROBE_CLAIMS.stream().map(DraClaim::uid).filter(u -> !r.claims().containsKey(u)).toList();
    if (!missing.isEmpty()) {
      throw fail(
          "no entry for claim UIDs "
              + missing
              + " (the kubelet: \"NodePrepareResources skipped "
              + missing.size()
              + " ResourceClaims\"): answer every claim, keyed by its UID");
    }
    List<String> extra =
        r.claims().keySet().stream()
            .filter(u -> PROBE_CLAIMS.stream().noneMatch(c -> c.uid().equals(u)))
            .toList();
    if (!extra.isEmpty()) {
      throw fail("entries for claims not asked about: " + extra);
    }
    List<String> parts = new ArrayList<>();
    r.claims()
        .forEach(
            (uid, c) ->
                parts.add(
                    uid
                        + (c.ok()
                            ? ": " + c.devices().size() + " devices"
                            : ": error " + c.error())));
    return "an entry per claim for made-up claims (" + String.join("; ", parts) + ")";
  }

  private String draPrepareIdempotent() {
    if (firstPrepare == null || firstPrepare.callError().isPresent()) {
      throw new CheckSkipped("the first prepare failed");
    }
    DraResult again = kubelet.dra().nodePrepareResources(resource, PROBE_CLAIMS);
    if (again.callError().isPresent()) {
      throw fail("the repeated call failed: " + again.callError().get());
    }
    for (DraClaim c : PROBE_CLAIMS) {
      DraClaimResult a = firstPrepare.claims().get(c.uid());
      DraClaimResult b = again.claims().get(c.uid());
      if (b == null) {
        throw fail("no entry for " + c.uid() + " the second time");
      }
      if (a.ok() && (!b.ok() || !a.devices().equals(b.devices()))) {
        throw fail(
            "claim "
                + c.uid()
                + ": first "
                + a.devices()
                + ", then "
                + b.devices()
                + " "
                + b.error());
      }
    }
    kubelet.dra().nodeUnprepareResources(resource, PROBE_CLAIMS);
    return "the same answer for the same claims";
  }

  private String draUnprepareUnknown() {
    DraClaim unknown =
        new DraClaim("deviceplugin4j-conformance", "conformance-never-prepared", "never-prepared");
    DraResult r = kubelet.dra().nodeUnprepareResources(resource, List.of(unknown));
    if (r.callError().isPresent()) {
      throw fail("the call failed: " + r.callError().get());
    }
    if (!r.ok()) {
      throw fail(
          r.kubeletError().get() + ": an unknown claim is already unprepared, answer success");
    }
    return "succeeded for a claim it never prepared";
  }

  private String draHealthStream() {
    KubeletEvent e;
    try {
      e =
          kubelet.awaitEvent(
              BEGINNING,
              x -> x.kind() == Kind.DRA_HEALTH && x.resource().equals(resource),
              draHealthLimit);
    } catch (AssertionError ex) {
      throw fail(
          "no NodeWatchResources message within "
              + draHealthLimit.toSeconds()
              + " s of the registration");
    }
    if (e.outcome() != Outcome.OK) {
      throw fail(e.detail());
    }
    return e.detail();
  }

  private String draReRegistersAfterRestart() {
    Mark restarted = kubelet.restart();
    try {
      DraRegistration again = kubelet.dra().awaitRegistration(resource, restarted, restartTimeout);
      long ms = Math.max(0, (again.nanos() - restarted.nanos()) / 1_000_000);
      return restartVerdict(
          ms > restartLimit.toMillis() ? List.of() : List.of(ms + " ms"),
          ms > restartLimit.toMillis() ? List.of(ms + " ms") : List.of(),
          List.of(),
          "",
          true);
    } catch (AssertionError e) {
      return restartVerdict(
          List.of(), List.of(), List.of(resource), "(keep the registration socket served)", true);
    }
  }
}
