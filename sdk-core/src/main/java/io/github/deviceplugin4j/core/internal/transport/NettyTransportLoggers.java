package io.github.deviceplugin4j.core.internal.transport;

import io.netty.util.internal.logging.InternalLogLevel;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.slf4j.LoggerFactory;
import org.slf4j.helpers.FormattingTuple;
import org.slf4j.helpers.MessageFormatter;

/**
 * Netty's logger factory with the transport's loggers rate-limited: for the names given, what Netty
 * logs at INFO, WARN or ERROR goes through {@link TransportLogs#emit} (one line per kind per
 * minute, the cause on that line, details at DEBUG); every other logger is the one Netty's own
 * factory makes. Netty writes a stack trace per connection that hits one of its HTTP/2 limits (a
 * peer flooding PINGs or SETTINGS without reading): 35 lines a connection.
 */
final class NettyTransportLoggers extends InternalLoggerFactory {

  private final InternalLoggerFactory original;
  private final Method newInstance;
  private final Set<String> names;

  private NettyTransportLoggers(
      InternalLoggerFactory original, Method newInstance, Set<String> names) {
    this.original = original;
    this.newInstance = newInstance;
    this.names = names;
  }

  /**
   * Makes this Netty's default logger factory, wrapping the current one. Netty's factory makes a
   * logger through a protected method, reached here by reflection; where that is refused (a module
   * system that does not open Netty), Netty's logging stays as it is.
   */
  static void install(Collection<String> names) {
    try {
      Method m = InternalLoggerFactory.class.getDeclaredMethod("newInstance", String.class);
      m.setAccessible(true);
      InternalLoggerFactory.setDefaultFactory(
          new NettyTransportLoggers(
              InternalLoggerFactory.getDefaultFactory(), m, Set.copyOf(names)));
    } catch (ReflectiveOperationException | RuntimeException e) {
      LoggerFactory.getLogger(TransportLogs.LOGGER)
          .debug("Netty's transport logs are not rate-limited: {}", e.toString());
    }
  }

  @Override
  protected InternalLogger newInstance(String name) {
    InternalLogger real;
    try {
      real = (InternalLogger) newInstance.invoke(original, name);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot make Netty's logger " + name, e);
    }
    if (!names.contains(name)) {
      return real;
    }
    return (InternalLogger)
        Proxy.newProxyInstance(
            InternalLogger.class.getClassLoader(),
            new Class<?>[] {InternalLogger.class},
            (proxy, method, args) -> {
              Boolean warn = limitedLevel(method.getName(), args);
              if (warn == null) {
                return method.invoke(real, args);
              }
              emit(name, warn, args);
              return null;
            });
  }

  /**
   * Whether a call to Netty's logger logs at a rate-limited level: TRUE for WARN and ERROR, FALSE
   * for INFO, null for anything else (trace, debug, the {@code is...Enabled} checks).
   */
  private static Boolean limitedLevel(String method, Object[] args) {
    String level = method;
    if (method.equals("log") && args != null && args[0] instanceof InternalLogLevel l) {
      level = l.name().toLowerCase(java.util.Locale.ROOT);
    }
    return switch (level) {
      case "info" -> Boolean.FALSE;
      case "warn", "error" -> Boolean.TRUE;
      default -> null;
    };
  }

  /** One of Netty's logging calls (message, arguments, maybe a cause) through the rate limit. */
  private static void emit(String logger, boolean warn, Object[] args) {
    List<Object> rest = new ArrayList<>(Arrays.asList(args));
    if (!rest.isEmpty() && rest.get(0) instanceof InternalLogLevel) {
      rest.remove(0);
    }
    String format =
        !rest.isEmpty() && rest.get(0) instanceof String f ? f : "Unexpected exception:";
    if (!rest.isEmpty() && rest.get(0) instanceof String) {
      rest.remove(0);
    }
    if (rest.size() == 1 && rest.get(0) instanceof Object[] varargs) {
      rest = new ArrayList<>(Arrays.asList(varargs));
    }
    FormattingTuple f = MessageFormatter.arrayFormat(format, rest.toArray());
    Throwable cause = f.getThrowable();
    if (cause == null && !rest.isEmpty() && rest.get(rest.size() - 1) instanceof Throwable t) {
      cause = t;
    }
    TransportLogs.emit(logger, format, f.getMessage(), cause, warn);
  }
}
