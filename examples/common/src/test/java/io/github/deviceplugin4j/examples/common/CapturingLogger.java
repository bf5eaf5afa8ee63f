package io.github.deviceplugin4j.examples.common;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;

/** A logger that keeps each line as {@code "<LEVEL> <formatted message>"}. */
final class CapturingLogger extends LegacyAbstractLogger {
  private static final long serialVersionUID = 1L;
  final List<String> lines = new ArrayList<>();

  @Override
  protected String getFullyQualifiedCallerName() {
    return null;
  }

  @Override
  protected void handleNormalizedLoggingCall(
      Level level, Marker marker, String pattern, Object[] args, Throwable t) {
    lines.add(level + " " + MessageFormatter.basicArrayFormat(pattern, args));
  }

  @Override
  public boolean isTraceEnabled() {
    return true;
  }

  @Override
  public boolean isDebugEnabled() {
    return true;
  }

  @Override
  public boolean isInfoEnabled() {
    return true;
  }

  @Override
  public boolean isWarnEnabled() {
    return true;
  }

  @Override
  public boolean isErrorEnabled() {
    return true;
  }
}
