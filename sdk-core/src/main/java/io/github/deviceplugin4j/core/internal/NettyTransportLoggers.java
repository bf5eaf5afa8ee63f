package io.github.deviceplugin4j.core.internal;

import io.netty.util.internal.logging.AbstractInternalLogger;
import io.netty.util.internal.logging.InternalLogger;
import io.netty.util.internal.logging.InternalLoggerFactory;
import java.lang.reflect.Method;
import java.util.Set;
import org.slf4j.LoggerFactory;
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
   *
   * @param names the loggers to rate-limit
   */
  static void install(Iterable<String> names) {
    try {
      Method m = InternalLoggerFactory.class.getDeclaredMethod("newInstance", String.class);
      m.setAccessible(true);
      InternalLoggerFactory.setDefaultFactory(
          new NettyTransportLoggers(
              InternalLoggerFactory.getDefaultFactory(), m, Set.copyOf(toList(names))));
    } catch (ReflectiveOperationException | RuntimeException e) {
      LoggerFactory.getLogger(TransportLogs.LOGGER)
          .debug("Netty's transport logs are not rate-limited: {}", e.toString());
    }
  }

  private static java.util.List<String> toList(Iterable<String> names) {
    java.util.List<String> out = new java.util.ArrayList<>();
    names.forEach(out::add);
    return out;
  }

  @Override
  protected InternalLogger newInstance(String name) {
    InternalLogger real;
    try {
      real = (InternalLogger) newInstance.invoke(original, name);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot make Netty's logger " + name, e);
    }
    return names.contains(name) ? new Limited(real) : real;
  }

  /** Trace and debug as they are; INFO, WARN and ERROR through {@link TransportLogs#emit}. */
  private static final class Limited extends AbstractInternalLogger {
    private static final long serialVersionUID = 1L;
    private final transient InternalLogger real;

    Limited(InternalLogger real) {
      super(real.name());
      this.real = real;
    }

    private void emit(boolean warn, String format, Object[] args, Throwable cause) {
      Throwable t = cause;
      String text;
      if (args == null) {
        text = format;
      } else {
        org.slf4j.helpers.FormattingTuple f = MessageFormatter.arrayFormat(format, args);
        text = f.getMessage();
        if (t == null) {
          t = f.getThrowable();
        }
      }
      TransportLogs.emit(name(), String.valueOf(format), String.valueOf(text), t, warn);
    }

    @Override
    public boolean isTraceEnabled() {
      return real.isTraceEnabled();
    }

    @Override
    public void trace(String msg) {
      real.trace(msg);
    }

    @Override
    public void trace(String format, Object arg) {
      real.trace(format, arg);
    }

    @Override
    public void trace(String format, Object argA, Object argB) {
      real.trace(format, argA, argB);
    }

    @Override
    public void trace(String format, Object... arguments) {
      real.trace(format, arguments);
    }

    @Override
    public void trace(String msg, Throwable t) {
      real.trace(msg, t);
    }

    @Override
    public boolean isDebugEnabled() {
      return real.isDebugEnabled();
    }

    @Override
    public void debug(String msg) {
      real.debug(msg);
    }

    @Override
    public void debug(String format, Object arg) {
      real.debug(format, arg);
    }

    @Override
    public void debug(String format, Object argA, Object argB) {
      real.debug(format, argA, argB);
    }

    @Override
    public void debug(String format, Object... arguments) {
      real.debug(format, arguments);
    }

    @Override
    public void debug(String msg, Throwable t) {
      real.debug(msg, t);
    }

    @Override
    public boolean isInfoEnabled() {
      return real.isInfoEnabled();
    }

    @Override
    public void info(String msg) {
      emit(false, msg, null, null);
    }

    @Override
    public void info(String format, Object arg) {
      emit(false, format, new Object[] {arg}, null);
    }

    @Override
    public void info(String format, Object argA, Object argB) {
      emit(false, format, new Object[] {argA, argB}, null);
    }

    @Override
    public void info(String format, Object... arguments) {
      emit(false, format, arguments, null);
    }

    @Override
    public void info(String msg, Throwable t) {
      emit(false, msg, null, t);
    }

    @Override
    public boolean isWarnEnabled() {
      return real.isWarnEnabled();
    }

    @Override
    public void warn(String msg) {
      emit(true, msg, null, null);
    }

    @Override
    public void warn(String format, Object arg) {
      emit(true, format, new Object[] {arg}, null);
    }

    @Override
    public void warn(String format, Object... arguments) {
      emit(true, format, arguments, null);
    }

    @Override
    public void warn(String format, Object argA, Object argB) {
      emit(true, format, new Object[] {argA, argB}, null);
    }

    @Override
    public void warn(String msg, Throwable t) {
      emit(true, msg, null, t);
    }

    @Override
    public boolean isErrorEnabled() {
      return real.isErrorEnabled();
    }

    @Override
    public void error(String msg) {
      emit(true, msg, null, null);
    }

    @Override
    public void error(String format, Object arg) {
      emit(true, format, new Object[] {arg}, null);
    }

    @Override
    public void error(String format, Object argA, Object argB) {
      emit(true, format, new Object[] {argA, argB}, null);
    }

    @Override
    public void error(String format, Object... arguments) {
      emit(true, format, arguments, null);
    }

    @Override
    public void error(String msg, Throwable t) {
      emit(true, msg, null, t);
    }
  }
}
