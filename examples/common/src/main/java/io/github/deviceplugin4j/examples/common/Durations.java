package io.github.deviceplugin4j.examples.common;

import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Durations as people write them in flags, environment variables and files: {@code 5s}, {@code
 * 500ms}, {@code 2m}, ISO-8601 {@code PT5S}, or a bare number of seconds. {@link PluginCli}
 * registers it for every {@link Duration} option, where it accepts only positive ones (every
 * duration the examples take is an interval or a timeout).
 *
 * <pre>{@code
 * Duration poll = Durations.parse("500ms");
 * }</pre>
 */
public final class Durations implements ITypeConverter<Duration> {

  /**
   * Reads a duration.
   *
   * @param text {@code 5s}, {@code 500ms}, {@code 2m}, {@code PT5S} or {@code 5}
   * @return the duration
   * @throws IllegalArgumentException naming the text when it is no duration
   */
  public static Duration parse(String text) {
    String v = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
    try {
      if (v.startsWith("pt")) {
        return Duration.parse(v.toUpperCase(Locale.ROOT));
      }
      if (v.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
      }
      if (v.endsWith("s")) {
        return Duration.ofSeconds(Long.parseLong(v.substring(0, v.length() - 1)));
      }
      if (v.endsWith("m")) {
        return Duration.ofMinutes(Long.parseLong(v.substring(0, v.length() - 1)));
      }
      return Duration.ofSeconds(Long.parseLong(v));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a duration; write 5s, 500ms, 2m or PT5S", e);
    }
  }

  /** Creates the converter. */
  public Durations() {}

  @Override
  public Duration convert(String value) {
    Duration d;
    try {
      d = parse(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
    if (d.isNegative() || d.isZero()) {
      throw new TypeConversionException("'" + value + "' is not a positive duration");
    }
    return d;
  }
}
