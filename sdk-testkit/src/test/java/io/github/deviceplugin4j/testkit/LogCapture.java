package io.github.deviceplugin4j.testkit;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Records everything logged through java.util.logging (gRPC's logging) while open, to find records
 * of an executor used after its shutdown.
 */
public final class LogCapture extends Handler implements AutoCloseable {
  private final List<LogRecord> records = new CopyOnWriteArrayList<>();

  private LogCapture() {}

  /** Starts recording at the root logger. */
  public static LogCapture start() {
    LogCapture c = new LogCapture();
    Logger.getLogger("").addHandler(c);
    return c;
  }

  @Override
  public void publish(LogRecord r) {
    records.add(r);
  }

  @Override
  public void flush() {}

  /** Stops recording. */
  @Override
  public void close() {
    Logger.getLogger("").removeHandler(this);
  }

  /** The records whose exception chain holds a RejectedExecutionException, as logger: exception. */
  public List<String> rejectedExecutions() {
    return records.stream()
        .filter(LogCapture::rejectedExecution)
        .map(r -> r.getLoggerName() + ": " + r.getThrown())
        .toList();
  }

  private static boolean rejectedExecution(LogRecord r) {
    for (Throwable t = r.getThrown(); t != null; t = t.getCause()) {
      if (t instanceof RejectedExecutionException) {
        return true;
      }
    }
    return false;
  }
}
