package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * What a {@link FakeKubelet.Builder} collects: every setting with its default and its argument
 * check, and the check at start that the sockets can be served. The builder's setters only delegate
 * here; {@link KubeletParts} reads the settings once, when the fake is built, so a builder changed
 * after {@code start()} does not change a running fake.
 */
final class KubeletSettings {
  private Path pluginDir;
  private Path registryDir;
  private Path podResourcesSocket;
  private List<String> supportedVersions = List.of(FakeKubelet.V1BETA1);
  private Duration gracePeriod = FakeKubelet.DEFAULT_GRACE_PERIOD;
  private Duration rpcTimeout = Duration.ofSeconds(60);
  private boolean strictPreferredAllocation = true;
  private KubeletProfile profile = KubeletProfile.LATEST;
  private Long randomSeed;
  private Duration restartReturnDelay = Duration.ZERO;
  private Duration draCallTimeout = DraKubelet.CALL_TIMEOUT;
  private String draHealthService = DraKubelet.HEALTH_V1ALPHA1_SERVICE;
  private Consumer<FakeKubelet> afterRestartServed;
  private Runnable draSliceWiper;
  private final List<Consumer<KubeletEvent>> listeners = new ArrayList<>();

  // ---------------------------------------------------------------------------------------------
  // Setters, one per builder method, each checking its argument

  void draResourceSliceWiper(Runnable wiper) {
    this.draSliceWiper = wiper;
  }

  void draCallTimeout(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("draCallTimeout must be positive, got " + timeout);
    }
    this.draCallTimeout = timeout;
  }

  void draHealthService(String service) {
    if (service != null
        && !service.equals(DraKubelet.HEALTH_V1ALPHA1_SERVICE)
        && !service.equals(DraKubelet.HEALTH_V1_SERVICE)) {
      throw new IllegalArgumentException(
          "unknown DRA health service \""
              + service
              + "\": use DraKubelet.HEALTH_V1ALPHA1_SERVICE, HEALTH_V1_SERVICE or null");
    }
    this.draHealthService = service;
  }

  void profile(KubeletProfile profile) {
    this.profile = Objects.requireNonNull(profile, "profile");
  }

  void randomSeed(long seed) {
    this.randomSeed = seed;
  }

  void restartReturnDelay(Duration delay) {
    if (delay.isNegative()) {
      throw new IllegalArgumentException("restartReturnDelay must not be negative: " + delay);
    }
    this.restartReturnDelay = delay;
  }

  void afterRestartServed(Consumer<FakeKubelet> hook) {
    this.afterRestartServed = hook;
  }

  void pluginDir(Path dir) {
    this.pluginDir = Objects.requireNonNull(dir, "pluginDir");
  }

  void registryDir(Path dir) {
    this.registryDir = Objects.requireNonNull(dir, "registryDir");
  }

  void podResourcesSocket(Path socket) {
    this.podResourcesSocket = Objects.requireNonNull(socket, "podResourcesSocket");
  }

  void supportedVersions(String... versions) {
    if (versions.length == 0) {
      throw new IllegalArgumentException("supportedVersions needs at least one version");
    }
    this.supportedVersions = List.of(versions);
  }

  void gracePeriod(Duration gracePeriod) {
    if (gracePeriod.isNegative()) {
      throw new IllegalArgumentException("gracePeriod must not be negative: " + gracePeriod);
    }
    this.gracePeriod = gracePeriod;
  }

  void rpcTimeout(Duration timeout) {
    if (timeout.isNegative()) {
      throw new IllegalArgumentException("rpcTimeout must not be negative: " + timeout);
    }
    this.rpcTimeout = timeout;
  }

  void strictPreferredAllocation(boolean strict) {
    this.strictPreferredAllocation = strict;
  }

  void eventListener(Consumer<KubeletEvent> listener) {
    this.listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /**
   * Checks, before anything is built, that a plugin directory was given and that the sockets' paths
   * fit a Unix socket address.
   *
   * @throws IllegalStateException when no plugin directory was given
   * @throws IllegalArgumentException when a socket path is too long
   */
  void checkStartable() {
    if (pluginDir == null) {
      throw new IllegalStateException(
          "pluginDir is required: FakeKubelet.builder().pluginDir(dir).start()");
    }
    UdsTransport.checkSocketPath(pluginDir.resolve(FakeKubelet.KUBELET_SOCKET));
    if (podResourcesSocket != null) {
      UdsTransport.checkSocketPath(podResourcesSocket);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The settings as the parts take them

  Path pluginDir() {
    return pluginDir.toAbsolutePath();
  }

  Optional<Path> registryDir() {
    return Optional.ofNullable(registryDir).map(Path::toAbsolutePath);
  }

  Optional<Path> podResourcesSocket() {
    return Optional.ofNullable(podResourcesSocket).map(Path::toAbsolutePath);
  }

  List<String> supportedVersions() {
    return List.copyOf(supportedVersions);
  }

  Duration gracePeriod() {
    return gracePeriod;
  }

  Duration rpcTimeout() {
    return rpcTimeout;
  }

  boolean strictPreferredAllocation() {
    return strictPreferredAllocation;
  }

  KubeletProfile profile() {
    return profile;
  }

  /** The randomness where the kubelet's order is undefined: seeded when a seed was given. */
  Random random() {
    return randomSeed == null ? new Random() : new Random(randomSeed);
  }

  Duration draCallTimeout() {
    return draCallTimeout;
  }

  String draHealthService() {
    return draHealthService;
  }

  Runnable draSliceWiper() {
    return draSliceWiper;
  }

  List<Consumer<KubeletEvent>> listeners() {
    return listeners;
  }

  /**
   * What {@link FakeKubelet#restart()} runs after {@code kubelet.sock} is served again: the pause
   * of {@code restartReturnDelay}, then the test hook; both as set now.
   */
  Consumer<FakeKubelet> afterRestartServed() {
    Duration delay = restartReturnDelay;
    Consumer<FakeKubelet> hook = afterRestartServed;
    return k -> {
      // parkNanos may return early (a permit left by an unpark, or spuriously): park the rest.
      long end = System.nanoTime() + delay.toNanos();
      for (long left = delay.toNanos(); left > 0; left = end - System.nanoTime()) {
        LockSupport.parkNanos(left);
      }
      if (hook != null) {
        hook.accept(k);
      }
    };
  }
}
