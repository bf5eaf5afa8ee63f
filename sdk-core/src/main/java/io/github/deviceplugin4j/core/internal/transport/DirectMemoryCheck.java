package io.github.deviceplugin4j.core.internal.transport;

import io.github.deviceplugin4j.core.internal.Loggers;
import io.netty.util.internal.PlatformDependent;
import java.lang.reflect.Method;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;

/**
 * Whether Netty can free its direct buffers when it releases them, checked once per JVM as the
 * first server starts.
 *
 * <p>From JDK 25 Netty does not use {@code sun.misc.Unsafe} by default. It then frees a direct
 * buffer through the FFM API, which needs native access for Netty's module; without it a released
 * buffer's memory waits for a garbage collection of the buffer object. Under load (a peer flooding
 * frames, 4 MiB messages) that memory grows up to the direct memory limit, the heap's maximum by
 * default: measured on the FPGA example with the images' flags, RSS went from 87 to 222 MiB after a
 * SETTINGS flood, and 16 unfinished 4 MiB messages ran out of direct memory. The remedy is a flag,
 * so the SDK cannot fix it; it says so once, at WARN, naming the flag.
 */
final class DirectMemoryCheck {
  private static final Logger LOG = Loggers.named("UdsServer");
  private static final AtomicBoolean CHECKED = new AtomicBoolean();

  private DirectMemoryCheck() {}

  /** Logs {@link #warning} once per JVM, if there is one. */
  static void once() {
    if (!CHECKED.compareAndSet(false, true)) {
      return;
    }
    boolean unsafe;
    try {
      unsafe = PlatformDependent.hasUnsafe();
    } catch (RuntimeException | LinkageError e) {
      return; // another Netty than the one this SDK was built with: no claim about it
    }
    warning(Runtime.version().feature(), unsafe, nativeAccess(PlatformDependent.class.getModule()))
        .ifPresent(LOG::warn);
  }

  /**
   * The warning for a JVM of this feature release, or empty when Netty frees its buffers itself.
   *
   * @param feature the JDK's feature release (17, 21, 25, ...)
   * @param nettyHasUnsafe whether Netty uses {@code sun.misc.Unsafe}
   * @param nativeAccess whether Netty's module has native access; empty before JDK 22, which cannot
   *     tell
   */
  static Optional<String> warning(
      int feature, boolean nettyHasUnsafe, Optional<Boolean> nativeAccess) {
    if (nettyHasUnsafe || feature < 25 || nativeAccess.orElse(true)) {
      return Optional.empty();
    }
    return Optional.of(
        "JDK "
            + feature
            + " without native access for Netty: Netty cannot free the direct buffers it"
            + " releases, so their memory waits for a garbage collection and the plugin's RSS can"
            + " grow by up to the heap's maximum under load. Start the JVM with"
            + " --enable-native-access=ALL-UNNAMED (or put \"Enable-Native-Access: ALL-UNNAMED\" in"
            + " the runnable jar's manifest); see \"JVM flags\" in docs/deploying.md");
  }

  /** {@code Module.isNativeAccessEnabled()} (JDK 22+), or empty on an older JDK. */
  static Optional<Boolean> nativeAccess(Module module) {
    try {
      Method m = Module.class.getMethod("isNativeAccessEnabled");
      return Optional.of((Boolean) m.invoke(module));
    } catch (ReflectiveOperationException | RuntimeException e) {
      return Optional.empty();
    }
  }
}
