package io.github.deviceplugin4j.dra.internal;

import io.github.deviceplugin4j.dra.Claim;
import io.github.deviceplugin4j.dra.DraDriver;
import io.github.deviceplugin4j.dra.PrepareResult;
import io.github.deviceplugin4j.dra.PreparedDevice;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the kubelet's prepare and unprepare calls mean, on the SDK's types: every claim gets an
 * outcome keyed by its UID; a claim already prepared (by this or an earlier instance) is answered
 * from the checkpoint; unprepare of a claim nobody prepared succeeds; one call at a time under the
 * driver's {@link ClaimLock}. Problems of one claim stay in its outcome; only a problem of the
 * whole call (the lock or the checkpoint) fails the call.
 */
public final class ClaimService {

  private static final Logger LOG = LoggerFactory.getLogger(ClaimService.class);

  /**
   * The outcome of one claim.
   *
   * @param devices the prepared devices (empty for unprepare and for failures)
   * @param error empty on success
   */
  public record Outcome(List<PreparedDevice> devices, String error) {

    static Outcome ok(List<PreparedDevice> devices) {
      return new Outcome(devices, "");
    }

    static Outcome failed(String error) {
      return new Outcome(List.of(), error);
    }
  }

  private final DraDriver driver;
  private final ClaimLock lock;
  private final ClaimCheckpoint checkpoint;

  /**
   * A service for one driver and plugin directory.
   *
   * @param driver the vendor's driver
   * @param lock the plugin directory's lock
   * @param checkpoint the plugin directory's checkpoint
   */
  public ClaimService(DraDriver driver, ClaimLock lock, ClaimCheckpoint checkpoint) {
    this.driver = driver;
    this.lock = lock;
    this.checkpoint = checkpoint;
  }

  /**
   * Prepares claims.
   *
   * @param claims the claims of the request
   * @return an outcome per claim UID, in request order
   * @throws IOException when the lock or checkpoint fails
   * @throws InterruptedException when interrupted waiting for the lock
   */
  @SuppressWarnings("try") // the lock is held for the block
  public Map<String, Outcome> prepare(List<Claim> claims) throws IOException, InterruptedException {
    Map<String, Outcome> out = new LinkedHashMap<>();
    try (ClaimLock.Held held = lock.acquire()) {
      Map<String, PreparedClaim> state = checkpoint.read();
      List<String> added = new ArrayList<>();
      for (Claim claim : claims) {
        if (out.containsKey(claim.uid())) {
          continue; // the same claim twice in one request: one answer
        }
        String invalid = validate(claim);
        if (invalid != null) {
          out.put(claim.uid(), Outcome.failed(invalid));
          continue;
        }
        PreparedClaim recorded = state.get(claim.uid());
        if (recorded != null) {
          out.put(claim.uid(), Outcome.ok(recorded.devices()));
          continue;
        }
        Outcome outcome = callPrepare(claim);
        if (outcome.error().isEmpty()) {
          state.put(claim.uid(), new PreparedClaim(claim, outcome.devices()));
          added.add(claim.uid());
        }
        out.put(claim.uid(), outcome);
      }
      if (!added.isEmpty()) {
        try {
          checkpoint.write(state);
        } catch (IOException e) {
          LOG.error("Could not record prepared claims {}: {}", added, e.toString());
          for (String uid : added) {
            out.put(
                uid,
                Outcome.failed(
                    "the claim was prepared but the checkpoint "
                        + checkpoint.file()
                        + " could not be written ("
                        + e.getMessage()
                        + "); check that the plugin directory is writable; the kubelet will ask"
                        + " again"));
          }
        }
      }
    }
    return out;
  }

  /**
   * Unprepares claims.
   *
   * @param claims the claims of the request
   * @return an outcome per claim UID, in request order
   * @throws IOException when the lock or checkpoint fails
   * @throws InterruptedException when interrupted waiting for the lock
   */
  @SuppressWarnings("try") // the lock is held for the block
  public Map<String, Outcome> unprepare(List<Claim> claims)
      throws IOException, InterruptedException {
    Map<String, Outcome> out = new LinkedHashMap<>();
    try (ClaimLock.Held held = lock.acquire()) {
      Map<String, PreparedClaim> state = checkpoint.read();
      boolean changed = false;
      for (Claim claim : claims) {
        if (out.containsKey(claim.uid())) {
          continue;
        }
        String invalid = validate(claim);
        if (invalid != null) {
          out.put(claim.uid(), Outcome.failed(invalid));
          continue;
        }
        PreparedClaim recorded = state.get(claim.uid());
        if (recorded == null) {
          out.put(claim.uid(), Outcome.ok(List.of())); // nothing prepared: nothing to undo
          continue;
        }
        try {
          driver.unprepare(recorded.claim(), recorded.devices());
          state.remove(claim.uid());
          changed = true;
          out.put(claim.uid(), Outcome.ok(List.of()));
        } catch (Exception e) {
          LOG.warn("Unprepare of claim {} failed", claim, e);
          out.put(
              claim.uid(), Outcome.failed("unprepare of claim " + claim + " failed: " + text(e)));
        }
      }
      if (changed) {
        checkpoint.write(state);
      }
    }
    return out;
  }

  /**
   * The claims recorded as prepared, read under the lock.
   *
   * @return the prepared claims by UID
   * @throws IOException when the lock or checkpoint fails
   * @throws InterruptedException when interrupted waiting for the lock
   */
  @SuppressWarnings("try") // the lock is held for the block
  public Map<String, PreparedClaim> prepared() throws IOException, InterruptedException {
    try (ClaimLock.Held held = lock.acquire()) {
      return checkpoint.read();
    }
  }

  private Outcome callPrepare(Claim claim) {
    PrepareResult result;
    try {
      result = driver.prepare(claim);
    } catch (Exception e) {
      LOG.warn("Prepare of claim {} failed", claim, e);
      return Outcome.failed("prepare of claim " + claim + " failed: " + text(e));
    }
    if (result == null) {
      return Outcome.failed(
          "the driver returned no result for claim "
              + claim
              + " (a bug in the driver: return PrepareResult.prepared or failed)");
    }
    return result
        .error()
        .map(error -> Outcome.failed("prepare of claim " + claim + " failed: " + error))
        .orElseGet(() -> Outcome.ok(result.devices()));
  }

  private static String validate(Claim claim) {
    List<String> missing = new ArrayList<>();
    if (claim.uid().isEmpty()) {
      missing.add("uid");
    }
    if (claim.namespace().isEmpty()) {
      missing.add("namespace");
    }
    if (claim.name().isEmpty()) {
      missing.add("name");
    }
    if (missing.isEmpty()) {
      return null;
    }
    return "claim "
        + claim
        + " has no "
        + String.join(", no ", missing)
        + ": the kubelet sends the ResourceClaim's namespace, name and UID; nothing was done";
  }

  private static String text(Exception e) {
    String message = e.getMessage();
    return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
  }
}
