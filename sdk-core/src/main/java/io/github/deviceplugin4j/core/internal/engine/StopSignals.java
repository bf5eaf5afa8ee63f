package io.github.deviceplugin4j.core.internal.engine;

import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.Threads;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;

/**
 * Turns SIGTERM and SIGINT into a normal end of {@code run()}, so that a {@code main} which returns
 * afterwards ends the JVM with status 0, without the library calling {@code System.exit}.
 *
 * <p>The JVM's own handling of these signals runs the shutdown hooks and then halts with status
 * {@code 128 + signal} (143 for SIGTERM), whatever the hooks do. While {@link #install} is in
 * effect the signals only run the given action (closing the host); {@link #restore} puts the JVM's
 * handlers back. If the JVM is still alive {@code fallback} after a signal (something else keeps it
 * running: a non-daemon thread of the application), the signal is raised again with the JVM's
 * handler restored, i.e. the usual termination follows. Uses {@code sun.misc.Signal} (module {@code
 * jdk.unsupported}) through reflection; where it is missing, {@link #install} returns an instance
 * that does nothing and the shutdown hook path (status 143) remains.
 */
public final class StopSignals {

  private static final Logger LOG = Loggers.named("StopSignals");
  private static final List<String> NAMES = List.of("TERM", "INT");

  private final Method handle;
  private final Method raise;
  private final List<Object> signals;
  private final List<Object> previous;
  private final AtomicReference<Object> received = new AtomicReference<>();

  private StopSignals(Method handle, Method raise, List<Object> signals, List<Object> previous) {
    this.handle = handle;
    this.raise = raise;
    this.signals = signals;
    this.previous = previous;
  }

  /**
   * Handles SIGTERM and SIGINT with {@code onSignal} (called on the JVM's signal thread; it may
   * block until the host is closed); {@link #restore(Duration)} the handlers when done.
   */
  public static StopSignals install(Runnable onSignal) {
    try {
      Class<?> signalClass = Class.forName("sun.misc.Signal");
      Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
      Constructor<?> newSignal = signalClass.getConstructor(String.class);
      Method handle = signalClass.getMethod("handle", signalClass, handlerClass);
      Method raise = signalClass.getMethod("raise", signalClass);
      StopSignals self = new StopSignals(handle, raise, new ArrayList<>(), new ArrayList<>());
      Object handler =
          Proxy.newProxyInstance(
              handlerClass.getClassLoader(),
              new Class<?>[] {handlerClass},
              (proxy, method, args) -> {
                if (method.getName().equals("handle") && args != null && args.length == 1) {
                  self.received.compareAndSet(null, args[0]);
                  onSignal.run();
                  return null;
                }
                return switch (method.getName()) {
                  case "hashCode" -> System.identityHashCode(proxy);
                  case "equals" -> proxy == args[0];
                  default -> "deviceplugin4j stop signal handler";
                };
              });
      for (String name : NAMES) {
        Object signal = newSignal.newInstance(name);
        try {
          Object old = handle.invoke(null, signal, handler);
          synchronized (self) {
            self.previous.add(old);
            self.signals.add(signal);
          }
        } catch (ReflectiveOperationException | RuntimeException e) {
          // e.g. the JVM runs with -Xrs, or the signal is reserved: keep the JVM's handling
          LOG.debug("cannot handle SIG{}: {}", name, e.toString());
        }
      }
      return self;
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      LOG.debug(
          "sun.misc.Signal is not available ({}); SIGTERM ends the JVM with status 143",
          e.toString());
      return new StopSignals(null, null, List.of(), List.of());
    }
  }

  /** Whether a stop signal (SIGTERM or SIGINT) arrived. */
  public boolean received() {
    return received.get() != null;
  }

  /**
   * Puts the JVM's handlers back. After a stop signal, also starts a daemon thread that raises the
   * signal again if the JVM is still running {@code fallback} later, so that an application thread
   * cannot keep a stopped plugin's process alive.
   */
  public synchronized void restore(Duration fallback) {
    for (int i = 0; i < signals.size(); i++) {
      try {
        handle.invoke(null, signals.get(i), previous.get(i));
      } catch (ReflectiveOperationException | RuntimeException e) {
        LOG.debug("cannot restore the handler of {}: {}", signals.get(i), e.toString());
      }
    }
    Object signal = received.get();
    if (signal == null || raise == null) {
      return;
    }
    Thread watchdog =
        Threads.factory("exit-fallback", true)
            .newThread(
                () -> {
                  try {
                    Thread.sleep(fallback.toMillis());
                    LOG.warn(
                        "The JVM is still running {} ms after {}: another non-daemon thread keeps it"
                            + " alive; applying the signal's default action",
                        fallback.toMillis(),
                        signal);
                    raise.invoke(null, signal);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  } catch (ReflectiveOperationException | RuntimeException e) {
                    LOG.warn("cannot raise {} again: {}", signal, e.toString());
                  }
                });
    watchdog.start();
  }
}
