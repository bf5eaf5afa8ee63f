package io.github.deviceplugin4j.testkit.cli;

import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.CheckFailed;
import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.CheckSkipped;
import io.github.deviceplugin4j.testkit.cli.ConformanceSuite.CheckWarned;
import io.github.deviceplugin4j.testkit.spi.DraApiServer;
import io.github.deviceplugin4j.testkit.spi.PublishedSlice;
import io.github.deviceplugin4j.testkit.spi.PublishedSlice.PublishedDevice;
import io.github.deviceplugin4j.testkit.spi.PublishedSlice.Taint;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The checks of {@code conform --dra} that read the ResourceSlices a driver published in the API
 * server a {@link io.github.deviceplugin4j.testkit.spi.DraApiServerProvider} serves: {@code
 * dra-slices-valid} and {@code dra-unhealthy-tainted}. Without a provider both are skipped.
 */
final class DraSliceChecks {

  /** How long a driver has to publish its slices, and to taint (or clear) a device. */
  static final Duration SLICES_LIMIT = Duration.ofSeconds(10);

  /** What the unhealthy check says without --make-unhealthy. */
  static final String NO_HOOK =
      "give --make-unhealthy COMMAND, a shell command that makes one device fail (e.g. writes a"
          + " simulated error counter), to check that the driver taints it";

  private static final Duration POLL = Duration.ofMillis(100);
  private static final int MAX_PROBLEMS_SHOWN = 5;

  private final DraApiServerSession api;
  private final Optional<String> makeUnhealthy;
  private final Optional<String> makeHealthy;
  private final Map<String, String> env;
  private final Duration limit;

  /**
   * @param api the run's API server (maybe none)
   * @param makeUnhealthy the --make-unhealthy command, placeholders replaced
   * @param makeHealthy the --make-healthy command, placeholders replaced
   * @param env the environment the driver got, for the commands
   * @param timeScale --time-scale
   */
  DraSliceChecks(
      DraApiServerSession api,
      Optional<String> makeUnhealthy,
      Optional<String> makeHealthy,
      Map<String, String> env,
      int timeScale) {
    this.api = api;
    this.makeUnhealthy = makeUnhealthy;
    this.makeHealthy = makeHealthy;
    this.env = Map.copyOf(env);
    this.limit = SLICES_LIMIT.multipliedBy(timeScale);
  }

  /** Checks that skip: no API server. */
  static DraSliceChecks none() {
    return new DraSliceChecks(
        DraApiServerSession.none(""), Optional.empty(), Optional.empty(), Map.of(), 1);
  }

  private DraApiServer server() {
    return api.server().orElseThrow(() -> new CheckSkipped(DraApiServerSession.NO_PROVIDER));
  }

  // --- dra-slices-valid ----------------------------------------------------------------------

  String slicesValid(String driver) throws Exception {
    DraApiServer server = server();
    long t0 = System.nanoTime();
    List<PublishedSlice> slices = awaitPublished(server, driver);
    if (slices.isEmpty()) {
      throw new CheckFailed(
          "no ResourceSlice with spec.driver "
              + driver
              + " within "
              + limit.toSeconds()
              + " s (API server "
              + server.url()
              + "): publish the node's devices in a pool with spec.nodeName "
              + api.nodeName()
              + " (NODE_NAME)");
    }
    List<String> problems = new ArrayList<>();
    for (PublishedSlice s : slices) {
      s.problems().forEach(p -> problems.add("slice " + s.name() + ": " + p));
      if (s.nodeSelection().startsWith("nodeName=")
          && !s.nodeSelection().equals(PublishedSlice.nodeName(api.nodeName()))) {
        problems.add(
            "slice "
                + s.name()
                + ": spec.nodeName is "
                + s.nodeSelection().substring("nodeName=".length())
                + ", not the driver's node "
                + api.nodeName()
                + " (NODE_NAME): the scheduler would put pods on the wrong node");
      }
    }
    problems.addAll(incompletePools(slices));
    if (!problems.isEmpty()) {
      throw new CheckFailed(
          problems.size()
              + (problems.size() == 1 ? " problem" : " problems")
              + " the API server refuses ("
              + slices.size()
              + (slices.size() == 1 ? " slice checked): " : " slices checked): ")
              + problems.stream().limit(MAX_PROBLEMS_SHOWN).collect(Collectors.joining("; "))
              + (problems.size() > MAX_PROBLEMS_SHOWN
                  ? "; and " + (problems.size() - MAX_PROBLEMS_SHOWN) + " more"
                  : ""));
    }
    int devices = slices.stream().mapToInt(s -> s.devices().size()).sum();
    Set<String> pools = new LinkedHashSet<>();
    Set<String> selections = new LinkedHashSet<>();
    slices.forEach(
        s -> {
          pools.add(s.pool());
          selections.add(s.nodeSelection());
        });
    return slices.size()
        + (slices.size() == 1 ? " slice, " : " slices, ")
        + devices
        + (devices == 1 ? " device" : " devices")
        + " in pool "
        + String.join(", ", pools)
        + " ("
        + String.join(", ", selections)
        + ") within "
        + elapsedMillis(t0)
        + " ms; all pass the API server's validation";
  }

  /**
   * The driver's slices once at least one is there and every pool is complete (its newest
   * generation has resourceSliceCount slices), or what is there when the time is up.
   */
  private List<PublishedSlice> awaitPublished(DraApiServer server, String driver) throws Exception {
    long deadline = System.nanoTime() + limit.toNanos();
    while (true) {
      List<PublishedSlice> slices = server.slices(driver);
      if (!slices.isEmpty() && incompletePools(slices).isEmpty()) {
        return slices;
      }
      if (System.nanoTime() >= deadline) {
        return slices;
      }
      pause();
    }
  }

  /** A problem per pool whose newest generation lacks slices: the scheduler ignores such a pool. */
  static List<String> incompletePools(List<PublishedSlice> slices) {
    Map<String, List<PublishedSlice>> byPool = new TreeMap<>();
    slices.forEach(s -> byPool.computeIfAbsent(s.pool(), k -> new ArrayList<>()).add(s));
    List<String> out = new ArrayList<>();
    byPool.forEach(
        (pool, list) -> {
          long newest = list.stream().mapToLong(PublishedSlice::generation).max().orElse(0);
          List<PublishedSlice> current =
              list.stream().filter(s -> s.generation() == newest).toList();
          long expected = current.get(0).resourceSliceCount();
          if (current.size() != expected) {
            out.add(
                "pool "
                    + pool
                    + ": generation "
                    + newest
                    + " has "
                    + current.size()
                    + " slices but spec.pool.resourceSliceCount says "
                    + expected
                    + " (the scheduler ignores an incomplete pool)");
          }
        });
    return out;
  }

  // --- dra-unhealthy-tainted -----------------------------------------------------------------

  String unhealthyTainted(String driver) throws Exception {
    DraApiServer server = server();
    String breakIt = makeUnhealthy.orElseThrow(() -> new CheckSkipped(NO_HOOK));
    List<PublishedSlice> before = awaitPublished(server, driver);
    if (before.isEmpty()) {
      throw new CheckFailed(
          "no ResourceSlice of " + driver + " within " + limit.toSeconds() + " s to watch");
    }
    Map<String, List<Taint>> baseline = driverTaints(before, driver);
    runHook("--make-unhealthy", breakIt);
    long t0 = System.nanoTime();
    long deadline = t0 + limit.toNanos();
    // The devices that got a taint under the driver's name, with it (the first if several).
    Map<String, Taint> tainted = new LinkedHashMap<>();
    List<String> leftOut = List.of();
    List<PublishedSlice> now;
    while (true) {
      now = server.slices(driver);
      Map<String, List<Taint>> taints = driverTaints(now, driver);
      taints.forEach(
          (d, ts) -> {
            if (!ts.isEmpty() && !ts.equals(baseline.getOrDefault(d, List.of()))) {
              tainted.put(d, ts.get(0));
            }
          });
      if (!tainted.isEmpty()) {
        break;
      }
      if (incompletePools(now).isEmpty()) {
        leftOut = baseline.keySet().stream().filter(d -> !taints.containsKey(d)).toList();
        if (!leftOut.isEmpty()) {
          break;
        }
      }
      if (System.nanoTime() >= deadline) {
        throw new CheckFailed(
            "no device of "
                + driver
                + " got a taint with a key under "
                + driver
                + "/ within "
                + limit.toSeconds()
                + " s after --make-unhealthy, and none was left out: publish an unhealthy device"
                + " with a taint such as "
                + driver
                + "/unhealthy:NoSchedule so the scheduler keeps new claims off it");
      }
      pause();
    }
    long ms = elapsedMillis(t0);
    if (tainted.isEmpty()) {
      String back = makeHealthy.isPresent() ? restored(server, driver, leftOut) : "";
      throw new CheckWarned(
          "device "
              + String.join(", ", leftOut)
              + " left out of the slices "
              + ms
              + " ms after --make-unhealthy instead of tainted: a device taint ("
              + driver
              + "/unhealthy) keeps the device visible and says why; the SDK leaves devices out"
              + " only where the API server drops taints (feature gate DRADeviceTaints off)"
              + back);
    }
    List<String> refused =
        now.stream()
            .filter(s -> s.devices().stream().anyMatch(d -> tainted.containsKey(d.name())))
            .flatMap(s -> s.problems().stream().map(p -> "slice " + s.name() + ": " + p))
            .toList();
    if (!refused.isEmpty()) {
      throw new CheckFailed(
          "device "
              + String.join(", ", tainted.keySet())
              + " got a taint but the API server refuses its slice: "
              + String.join("; ", refused));
    }
    List<String> each = new ArrayList<>();
    tainted.forEach(
        (device, taint) ->
            each.add(
                "device "
                    + device
                    + " tainted "
                    + taint.key()
                    + "="
                    + taint.value()
                    + " effect "
                    + taint.effect()));
    String result = String.join(", ", each) + " " + ms + " ms after --make-unhealthy";
    if (makeHealthy.isEmpty()) {
      return result;
    }
    runHook("--make-healthy", makeHealthy.get());
    long t1 = System.nanoTime();
    long deadline2 = t1 + limit.toNanos();
    while (true) {
      Map<String, List<Taint>> taints = driverTaints(server.slices(driver), driver);
      List<String> gone = tainted.keySet().stream().filter(d -> !taints.containsKey(d)).toList();
      List<String> still =
          tainted.keySet().stream()
              .filter(d -> taints.containsKey(d) && !taints.get(d).isEmpty())
              .toList();
      if (gone.isEmpty() && still.isEmpty()) {
        return result
            + "; "
            + (tainted.size() == 1 ? "taint" : "taints")
            + " gone "
            + elapsedMillis(t1)
            + " ms after --make-healthy";
      }
      if (System.nanoTime() >= deadline2) {
        throw new CheckFailed(
            result
                + ", but "
                + limit.toSeconds()
                + " s after --make-healthy "
                + (still.isEmpty() ? "" : "still tainted: " + String.join(", ", still))
                + (!still.isEmpty() && !gone.isEmpty() ? "; " : "")
                + (gone.isEmpty() ? "" : "gone from the slices: " + String.join(", ", gone))
                + ": remove the taint when the device recovers");
      }
      pause();
    }
  }

  /** After --make-healthy: whether the left-out devices came back. */
  private String restored(DraApiServer server, String driver, List<String> devices)
      throws Exception {
    runHook("--make-healthy", makeHealthy.get());
    long t0 = System.nanoTime();
    long deadline = t0 + limit.toNanos();
    while (true) {
      Set<String> present = driverTaints(server.slices(driver), driver).keySet();
      if (present.containsAll(devices)) {
        return "; back " + elapsedMillis(t0) + " ms after --make-healthy";
      }
      if (System.nanoTime() >= deadline) {
        return "; still gone " + limit.toSeconds() + " s after --make-healthy";
      }
      pause();
    }
  }

  /** Each device of the slices with its taints whose key is under the driver's name. */
  private static Map<String, List<Taint>> driverTaints(List<PublishedSlice> slices, String driver) {
    Map<String, List<Taint>> out = new LinkedHashMap<>();
    for (PublishedSlice s : slices) {
      for (PublishedDevice d : s.devices()) {
        out.put(
            d.name(), d.taints().stream().filter(t -> t.key().startsWith(driver + "/")).toList());
      }
    }
    return out;
  }

  /** Runs a hook with sh -c and the driver's environment; a failure fails the check. */
  private void runHook(String option, String command) throws Exception {
    ProcessBuilder pb = new ProcessBuilder("sh", "-c", command).redirectErrorStream(true);
    pb.environment().putAll(env);
    pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      throw new CheckFailed(option + ": cannot run sh -c: " + e.getMessage());
    }
    ByteArrayOutputStream output = new ByteArrayOutputStream();
    Thread reader =
        new Thread(
            () -> {
              try (InputStream in = p.getInputStream()) {
                in.transferTo(output);
              } catch (IOException e) {
                // the process ended
              }
            },
            "hook-output");
    reader.setDaemon(true);
    reader.start();
    if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      throw new CheckFailed(
          option + " did not finish within " + limit.toSeconds() + " s: " + command);
    }
    reader.join(1000);
    if (p.exitValue() != 0) {
      String out = output.toString(StandardCharsets.UTF_8).strip();
      throw new CheckFailed(
          option
              + " exited with code "
              + p.exitValue()
              + ": "
              + command
              + (out.isEmpty() ? "" : " (" + ConformanceSuite.firstLine(out) + ")"));
    }
  }

  private static void pause() throws InterruptedException {
    Thread.sleep(POLL.toMillis()); // polling the API server: the SPI has no watch
  }

  private static long elapsedMillis(long t0) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
  }
}
