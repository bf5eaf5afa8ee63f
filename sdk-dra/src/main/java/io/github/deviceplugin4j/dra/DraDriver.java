package io.github.deviceplugin4j.dra;

import java.util.List;

/**
 * The interface a vendor implements to serve a DRA driver: prepare a claim's devices, and undo it.
 *
 * <p>The host ({@link DraPluginHost}) owns everything around it: it answers every claim of a
 * kubelet request in its own entry, validates the claims, calls the driver one claim at a time
 * (never two calls at once, not even across two instances of the plugin during a rolling update:
 * they take a file lock in the plugin directory), records what was prepared in a checkpoint, and
 * answers a repeated prepare from that record without calling the driver again. So {@link
 * #unprepare} always gets the devices {@link #prepare} returned, even after a restart of the plugin
 * or once the ResourceClaim is gone from the API server.
 *
 * <p>Optional: implement {@link DraHealthReporter} as well to stream device health to the kubelet.
 *
 * <pre>{@code
 * class FpgaDriver implements DraDriver {
 *   public PrepareResult prepare(Claim claim) throws Exception {
 *     // look up what the scheduler allocated to the claim, write a CDI spec named after its UID
 *     return PrepareResult.prepared(
 *         PreparedDevice.of("node-1", "fpga-0", "fpga.example.com/fpga=" + claim.uid() + "-0"));
 *   }
 *   public void unprepare(Claim claim, List<PreparedDevice> prepared) throws Exception {
 *     // remove the claim's CDI spec
 *   }
 * }
 * }</pre>
 */
public interface DraDriver {

  /**
   * Prepares one claim. Called at most once per claim UID while the claim stays prepared; a failed
   * claim is tried again when the kubelet asks again. If the plugin dies in the middle of a call,
   * the kubelet repeats it and this may be called again for a claim that was prepared just before:
   * make it safe to repeat (write files atomically, under names derived from the claim UID).
   *
   * @param claim the claim
   * @return the prepared devices, or {@link PrepareResult#failed(String)}
   * @throws Exception on failure, like {@code failed(message)}; the claim's entry carries the
   *     exception's message
   */
  PrepareResult prepare(Claim claim) throws Exception;

  /**
   * Undoes {@link #prepare} for one claim. Called only for a claim this driver prepared (by this
   * instance or an earlier one); the kubelet's unprepare of a claim nobody prepared is answered by
   * the host. On an exception the claim stays prepared and the kubelet tries again later.
   *
   * @param claim the claim
   * @param prepared the devices {@link #prepare} returned for it
   * @throws Exception when the claim could not be unprepared; the claim's entry carries the message
   */
  void unprepare(Claim claim, List<PreparedDevice> prepared) throws Exception;
}
