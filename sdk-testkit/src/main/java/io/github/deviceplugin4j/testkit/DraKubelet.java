package io.github.deviceplugin4j.testkit;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The DRA side of the fake kubelet: the kubelet's DRA manager and the plugin watcher's handler for
 * DRA drivers. Reached through {@link FakeKubelet#dra()}, one per fake kubelet; it shares the
 * fake's event log, so {@link FakeKubelet#mark()} and the {@link Mark} from {@link
 * FakeKubelet#restart()} work here too. DRA drivers register through the registry directory ({@link
 * FakeKubelet.Builder#registryDir}); the builder's {@code dra...} settings configure this side.
 *
 * <pre>{@code
 * try (FakeKubelet kubelet = FakeKubelet.builder().pluginDir(dir).registryDir(registry).start()) {
 *   DraKubelet dra = kubelet.dra();
 *   dra.awaitRegistration("gpu.example.com", Duration.ofSeconds(5));
 *   DraResult r = dra.prepareResources("pod-1", "gpu.example.com",
 *       List.of(new DraClaim("default", claimUid, "gpu")));   // NodePrepareResources
 *   assertThat(r.ok()).isTrue();
 *   Mark m = kubelet.restart();                               // prepared claims survive
 *   dra.awaitRegistration("gpu.example.com", m, Duration.ofSeconds(5));
 *   assertThat(dra.unprepareResources("pod-1", "gpu.example.com").ok()).isTrue();
 * }
 * }</pre>
 *
 * <p>Like the kubelet: at start and at each {@link FakeKubelet#restart()}, before the plugins
 * registry is watched again, the fake runs the {@link FakeKubelet.Builder#draResourceSliceWiper
 * ResourceSlice wiper} as the kubelet's DRA registration handler does when it starts, from v1.32
 * ({@code wipeResourceSlices} with no driver in {@code pkg/kubelet/cm/dra/plugin/registration.go},
 * {@code dra_plugin_manager.go} from v1.34). The kubelet runs it in the background, racing with the
 * drivers' registrations; the fake runs it first, so a test sees the slices gone before any driver
 * is back. Each call is a {@link KubeletEvent.Kind#DRA_SLICES_WIPED} event ({@link
 * KubeletEvent.Outcome#FAILED} with the exception's text when it throws). Not modelled: the wipe of
 * a driver's slices after its last plugin deregistered (upstream waits {@code wipingDelay}, 30 s by
 * default). A restart forgets every DRA plugin and the health it reported and closes its connection
 * and health stream; the registry sockets are rediscovered and registered again, and prepared
 * claims survive, like the kubelet's checkpoint. What differs between kubelet versions is listed in
 * {@link KubeletProfile}.
 *
 * <p>Blocking methods ({@code await...}) throw {@link AssertionError} on timeout with the event log
 * in the message. All methods are thread-safe.
 */
public final class DraKubelet {
  /**
   * The DRA kubelet plugin service v1 as a driver lists it in {@code supported_versions}:
   * upstream's {@code DRAPluginService} constant of {@code k8s.io/kubelet/pkg/apis/dra/v1}
   * (kubelets 1.34 and newer), not the full gRPC name {@code
   * k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin}, which no kubelet knows.
   */
  public static final String V1_SERVICE = "v1.DRAPlugin";

  /**
   * The DRA kubelet plugin service v1beta1 as listed in {@code supported_versions} (upstream's
   * {@code DRAPluginService} of {@code k8s.io/kubelet/pkg/apis/dra/v1beta1}; kubelets 1.32 and
   * newer).
   */
  public static final String V1BETA1_SERVICE = "v1beta1.DRAPlugin";

  /**
   * The alpha DRA service kubelets 1.32 and 1.33 fall back to when a registration lists none they
   * know (upstream's {@code NodeService} of {@code k8s.io/kubelet/pkg/apis/dra/v1alpha4}); the fake
   * calls it as {@code v1alpha3.Node/NodePrepareResources}, which an SDK driver answers {@code
   * Unimplemented}.
   */
  public static final String V1ALPHA3_FALLBACK_SERVICE = "v1alpha3.Node";

  /** The DRA health service kubelets 1.34 to 1.36 call, and the fake's default. */
  public static final String HEALTH_V1ALPHA1_SERVICE = "v1alpha1.DRAResourceHealth";

  /** The DRA health service v1 (not called by kubelets up to 1.36). */
  public static final String HEALTH_V1_SERVICE = "v1.DRAResourceHealth";

  /**
   * The kubelet's deadline for each call to a DRA driver (its {@code defaultClientCallTimeout}).
   */
  public static final Duration CALL_TIMEOUT = Duration.ofSeconds(45);

  private final DraPluginManager dra;
  private final KubeletAwaits awaits;

  DraKubelet(DraPluginManager dra, KubeletAwaits awaits) {
    this.dra = dra;
    this.awaits = awaits;
  }

  /**
   * {@return every DRA driver registration accepted so far, oldest first (also those a restart or a
   * removed registry socket ended)}
   */
  public List<DraRegistration> registrations() {
    return dra.registrations();
  }

  /**
   * The registration of the driver's plugin the kubelet would call now: the newest one whose
   * connection is up, else the newest one (like the kubelet's plugin store).
   *
   * @param driver the DRA driver name
   * @return its current registration, or empty when none is registered
   */
  public Optional<DraRegistration> registration(String driver) {
    return dra.registration(driver);
  }

  /**
   * Like {@link #awaitRegistration(String, Mark, Duration)}, but any registration of the driver
   * counts: returns the first one, also one accepted before the call.
   *
   * @param driver the DRA driver name
   * @param timeout how long to wait
   * @return the first registration of the driver
   */
  public DraRegistration awaitRegistration(String driver, Duration timeout) {
    return awaits.draRegistration(driver, null, timeout);
  }

  /**
   * Waits for the first registration of the DRA driver accepted after a mark: race-free, however
   * soon after the mark the driver registered.
   *
   * @param driver the DRA driver name
   * @param after a mark from {@link FakeKubelet#mark()} or {@link FakeKubelet#restart()}
   * @param timeout how long to wait
   * @return the first registration of the driver newer than the mark
   */
  public DraRegistration awaitRegistration(String driver, Mark after, Duration timeout) {
    return awaits.draRegistration(driver, after, timeout);
  }

  /**
   * Prepares a pod's claims of one driver like the kubelet before the pod starts: claims the fake
   * already holds as prepared (for another pod, or before a restart) only get the pod's reference
   * and are not sent again; the others go to the driver in one {@code NodePrepareResources} call
   * (with the kubelet's 45 s deadline, {@link #CALL_TIMEOUT}), checked like the kubelet checks it
   * (see {@link DraResult}). On success the claims and their devices are remembered, across {@link
   * FakeKubelet#restart()} too, for {@link #unprepareResources}.
   *
   * @param podUid the pod's UID
   * @param driver the DRA driver name
   * @param claims the pod's claims allocated by that driver
   * @return the outcome; {@link DraResult#ok()} is false where the pod would not start
   */
  public DraResult prepareResources(String podUid, String driver, List<DraClaim> claims) {
    return dra.prepare(podUid, driver, List.copyOf(claims));
  }

  /**
   * Unprepares a pod's claims of one driver like the kubelet after the pod stopped: a claim other
   * pods still use only loses this pod's reference; the others go to the driver in one {@code
   * NodeUnprepareResources} call and are forgotten when it succeeds (they stay, for a retry, when
   * it fails).
   *
   * @param podUid the pod's UID
   * @param driver the DRA driver name
   * @return the outcome (no call and no entries when nothing was left to unprepare)
   */
  public DraResult unprepareResources(String podUid, String driver) {
    return dra.unprepare(podUid, driver);
  }

  /**
   * Sends one {@code NodePrepareResources} call with exactly these claims, bypassing the fake's
   * claim cache (to test idempotence or odd requests), and checks the answer like the kubelet.
   *
   * @param driver the DRA driver name
   * @param claims the claims to send
   * @return the outcome
   */
  public DraResult nodePrepareResources(String driver, List<DraClaim> claims) {
    return dra.call(true, driver, List.copyOf(claims), "direct call: ");
  }

  /**
   * Like {@link #nodePrepareResources}, one {@code NodeUnprepareResources} call with exactly these
   * claims (e.g. a claim the driver never prepared).
   *
   * @param driver the DRA driver name
   * @param claims the claims to send
   * @return the outcome
   */
  public DraResult nodeUnprepareResources(String driver, List<DraClaim> claims) {
    return dra.call(false, driver, List.copyOf(claims), "direct call: ");
  }

  /**
   * {@return the claims the fake holds as prepared (its claim-info cache, which survives restarts
   * like the kubelet's checkpoint)}
   */
  public List<DraPreparedClaim> preparedClaims() {
    return dra.preparedClaims();
  }

  /**
   * Starts a pod whose claims are prepared: from now on the PodResources API lists, for each of its
   * containers, the devices of the prepared claims it uses (as dynamic resources), until the claims
   * are unprepared for the pod.
   *
   * @param pod the pod and its containers' claims
   */
  public void podStarted(DraPod pod) {
    dra.podStarted(Objects.requireNonNull(pod, "pod"));
  }

  /**
   * The last health the driver reported for each of its devices on {@code NodeWatchResources}
   * (empty before the first message, after a restart until it reports again, and for a driver that
   * does not serve health).
   *
   * @param driver the DRA driver name
   * @return one entry per device, in the order first reported
   */
  public List<DraDeviceHealth> deviceHealth(String driver) {
    return dra.deviceHealth(driver);
  }

  /**
   * Waits until the driver's {@link #deviceHealth(String)} satisfies a condition.
   *
   * @param driver the DRA driver name
   * @param condition tested on the health list after each change (under the fake's lock: keep it
   *     quick)
   * @param timeout how long to wait
   * @return the list that satisfied the condition
   */
  public List<DraDeviceHealth> awaitDeviceHealth(
      String driver, Predicate<List<DraDeviceHealth>> condition, Duration timeout) {
    return awaits.draDeviceHealth(driver, condition, timeout);
  }
}
