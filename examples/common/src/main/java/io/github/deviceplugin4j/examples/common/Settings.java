package io.github.deviceplugin4j.examples.common;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * Merges settings from, lowest precedence first: defaults, a properties file ({@code --config} or
 * {@code <PREFIX>CONFIG}, else the default of the key {@code config} if there is one), environment
 * variables ({@code <PREFIX><KEY>}, upper case, dashes as underscores) and {@code --key=value}
 * flags. An unknown key is an error naming the known ones. Keys starting with an optional extra
 * prefix (e.g. {@code pool.}) are accepted from the file and from flags and kept apart in {@link
 * #extra()}.
 *
 * <pre>{@code
 * Map<String, String> defaults = new LinkedHashMap<>();
 * defaults.put("root", "/");
 * defaults.put("poll-interval", "5s");
 * Settings s = Settings.parse(args, System.getenv(), "FPGA_", defaults);
 * Duration poll = s.duration("poll-interval");
 * }</pre>
 */
public final class Settings {
  private final Map<String, String> values;
  private final String extraPrefix;

  private Settings(Map<String, String> values, String extraPrefix) {
    this.values = values;
    this.extraPrefix = extraPrefix;
  }

  /**
   * Reads settings with a fixed set of keys.
   *
   * @param args command-line flags, {@code --key=value}
   * @param env the environment, usually {@link System#getenv()}
   * @param envPrefix the environment variables' prefix, e.g. {@code FPGA_}
   * @param defaults every key with its default value, in the order to document them
   * @return the merged settings
   * @throws IllegalArgumentException naming the bad argument, key or file
   */
  public static Settings parse(
      String[] args, Map<String, String> env, String envPrefix, Map<String, String> defaults) {
    return parse(args, env, envPrefix, defaults, null);
  }

  /**
   * Reads settings with a fixed set of keys plus any key starting with {@code extraPrefix}.
   *
   * @param args command-line flags, {@code --key=value}
   * @param env the environment, usually {@link System#getenv()}
   * @param envPrefix the environment variables' prefix, e.g. {@code NIC_}
   * @param defaults every key with its default value, in the order to document them; a {@code
   *     config} entry is the file read when neither {@code --config} nor {@code <PREFIX>CONFIG} is
   *     given
   * @param extraPrefix the prefix of further keys accepted from the file and from flags (not from
   *     the environment), e.g. {@code pool.}; null for none
   * @return the merged settings
   * @throws IllegalArgumentException naming the bad argument, key or file
   */
  public static Settings parse(
      String[] args,
      Map<String, String> env,
      String envPrefix,
      Map<String, String> defaults,
      String extraPrefix) {
    Set<String> keys = new LinkedHashSet<>(defaults.keySet());
    keys.remove("config");
    Map<String, String> flags = new LinkedHashMap<>();
    for (String arg : args) {
      if (!arg.startsWith("--") || !arg.contains("=")) {
        throw new IllegalArgumentException(
            "unexpected argument '"
                + arg
                + "'; use --key=value with a key of "
                + keys
                + " or --config");
      }
      String key = arg.substring(2, arg.indexOf('='));
      if (!keys.contains(key) && !key.equals("config") && !isExtra(key, extraPrefix)) {
        throw new IllegalArgumentException(
            "unknown option --" + key + "; known: " + keys + ", config");
      }
      flags.put(key, arg.substring(arg.indexOf('=') + 1));
    }
    Map<String, String> merged = new LinkedHashMap<>(defaults);
    String file =
        flags.getOrDefault(
            "config", env.getOrDefault(envPrefix + "CONFIG", defaults.get("config")));
    if (file != null && !file.isBlank()) {
      Properties props = new Properties();
      try (Reader r = Files.newBufferedReader(Path.of(file), StandardCharsets.UTF_8)) {
        props.load(r);
      } catch (IOException e) {
        throw new IllegalArgumentException("cannot read config file " + file + ": " + e, e);
      }
      for (String key : props.stringPropertyNames()) {
        if (!keys.contains(key) && !isExtra(key, extraPrefix)) {
          throw new IllegalArgumentException(
              "unknown key '" + key + "' in " + file + "; known: " + keys);
        }
        merged.put(key, props.getProperty(key).trim());
      }
    }
    for (String key : keys) {
      String value = env.get(envPrefix + key.toUpperCase(Locale.ROOT).replace('-', '_'));
      if (value != null && !value.isBlank()) {
        merged.put(key, value.trim());
      }
    }
    flags.forEach(
        (k, v) -> {
          if (!k.equals("config")) {
            merged.put(k, v.trim());
          }
        });
    return new Settings(merged, extraPrefix);
  }

  private static boolean isExtra(String key, String extraPrefix) {
    return extraPrefix != null && key.startsWith(extraPrefix);
  }

  /**
   * The settings whose keys start with the extra prefix, in file then flag order.
   *
   * @return key to value; empty when there is no extra prefix
   */
  public Map<String, String> extra() {
    Map<String, String> out = new LinkedHashMap<>();
    values.forEach(
        (k, v) -> {
          if (isExtra(k, extraPrefix)) {
            out.put(k, v);
          }
        });
    return out;
  }

  /**
   * A value as text.
   *
   * @param key the key
   * @return its value, or null for a key that is neither known nor given
   */
  public String get(String key) {
    return values.get(key);
  }

  /**
   * A duration such as {@code 5s}, {@code 500ms}, {@code 2m} or ISO-8601 {@code PT5S}; a bare
   * number is seconds.
   *
   * @param key the key
   * @return the duration
   * @throws IllegalArgumentException naming the key and the value when it is not a duration
   */
  public Duration duration(String key) {
    String v = values.get(key).trim().toLowerCase(Locale.ROOT);
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
          key + " must be a duration such as 5s, 500ms or PT5S, was '" + values.get(key) + "'", e);
    }
  }

  /**
   * A whole number.
   *
   * @param key the key
   * @return the number
   * @throws IllegalArgumentException naming the key and the value when it is not a whole number
   */
  public int integer(String key) {
    try {
      return Integer.parseInt(values.get(key).trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          key + " must be a whole number, was '" + values.get(key) + "'", e);
    }
  }

  /**
   * One of an enum's constants, written in any case ({@code af} for {@code AF}).
   *
   * @param key the key
   * @param type the enum
   * @param <E> the enum type
   * @return the constant
   * @throws IllegalArgumentException naming the key, the choices and the value when it is none of
   *     them, e.g. {@code mode must be 'af' or 'region', was 'fast'}
   */
  public <E extends Enum<E>> E choice(String key, Class<E> type) {
    String value = values.get(key);
    try {
      return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      List<String> names =
          Arrays.stream(type.getEnumConstants())
              .map(c -> "'" + c.name().toLowerCase(Locale.ROOT) + "'")
              .toList();
      String choices =
          names.size() == 1
              ? names.get(0)
              : String.join(", ", names.subList(0, names.size() - 1))
                  + " or "
                  + names.get(names.size() - 1);
      throw new IllegalArgumentException(key + " must be " + choices + ", was '" + value + "'", e);
    }
  }
}
