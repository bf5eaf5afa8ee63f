package io.github.deviceplugin4j.core.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The SDK's logger names. They are the class names this package had before it was split into
 * sub-packages by concern, and they stay so: every log line prints its logger's name, the docs
 * quote such lines, and users configure these names (the reliability suite's {@code
 * simplelogger.properties} too). A class that moves keeps its logger.
 */
public final class Loggers {

  private static final String PREFIX = "io.github.deviceplugin4j.core.internal.";

  /**
   * The logger of one resource's life: serving, registering, losing and finding the kubelet, its
   * device counts and health changes, the backend's failures. Several classes log there, so that a
   * resource's story reads in one logger.
   */
  public static final String RESOURCE = PREFIX + "ResourcePlugin";

  private Loggers() {}

  /** The logger of a resource's life ({@link #RESOURCE}). */
  public static Logger resource() {
    return LoggerFactory.getLogger(RESOURCE);
  }

  /**
   * The logger a class had when it lived in this package, by its simple name, e.g. {@code
   * "HostEngine"}.
   */
  public static Logger named(String simpleName) {
    return LoggerFactory.getLogger(PREFIX + simpleName);
  }

  /** An exception in one line for a log or an error message: its simple class name and message. */
  public static String describe(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }
}
