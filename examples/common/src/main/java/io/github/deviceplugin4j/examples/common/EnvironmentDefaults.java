package io.github.deviceplugin4j.examples.common;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeSet;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Where an option not given on the command line gets its value, first match wins: the environment
 * variable {@code <PREFIX><KEY>} ({@code FPGA_POLL_INTERVAL} for {@code --poll-interval}), then the
 * properties file named by {@code --config} or {@code <PREFIX>CONFIG} (keys without {@code --}),
 * then a shared variable such as {@code METRICS_ADDRESS}, then the option's own {@code
 * defaultValue}. Blank environment variables count as unset.
 *
 * <pre>{@code
 * EnvironmentDefaults defaults =
 *     EnvironmentDefaults.of("FPGA_", System.getenv()).withPropertiesFile("--config");
 * System.exit(PluginCli.execute(new FpgaPlugin(), defaults, args));
 * }</pre>
 *
 * <p>A file that cannot be read, or that holds a key no option has, is reported by {@link
 * #check(CommandSpec)} (which {@link PluginCli} calls before running the command), so that {@code
 * --help} works whatever the file.
 */
public final class EnvironmentDefaults implements IDefaultValueProvider {
  private final String prefix;
  private final Map<String, String> env;
  private final String fileOption;
  private final String extraPrefix;
  private final Map<String, String> fallbacks;
  private final Map<String, Loaded> files = new HashMap<>();
  private final Map<ArgSpec, String> sources = new HashMap<>();

  /** A properties file as read, or why it could not be. */
  private record Loaded(Properties properties, IOException failure) {}

  private EnvironmentDefaults(
      String prefix,
      Map<String, String> env,
      String fileOption,
      String extraPrefix,
      Map<String, String> fallbacks) {
    this.prefix = Objects.requireNonNull(prefix, "prefix");
    this.env = Map.copyOf(env);
    this.fileOption = fileOption;
    this.extraPrefix = extraPrefix;
    this.fallbacks = Map.copyOf(fallbacks);
  }

  /**
   * Defaults from the environment only; {@code --metrics-address} also reads {@code
   * METRICS_ADDRESS} ({@link MetricsAddress#ENV}).
   *
   * @param prefix the variables' prefix, e.g. {@code FPGA_}
   * @param env the environment, usually {@link System#getenv()}
   * @return the defaults
   */
  public static EnvironmentDefaults of(String prefix, Map<String, String> env) {
    return new EnvironmentDefaults(
        prefix, env, null, null, Map.of(MetricsAddress.KEY, MetricsAddress.ENV));
  }

  /**
   * No defaults beyond the options' own: for programs that read no environment variable (the
   * benchmarks).
   *
   * @return the defaults
   */
  public static EnvironmentDefaults none() {
    return new EnvironmentDefaults("", Map.of(), null, null, Map.of());
  }

  /**
   * These defaults, also read from a properties file named by an option (or its variable).
   *
   * @param option the option naming the file, e.g. {@code --config}
   * @return a copy
   */
  public EnvironmentDefaults withPropertiesFile(String option) {
    return new EnvironmentDefaults(prefix, env, option, extraPrefix, fallbacks);
  }

  /**
   * These defaults, accepting keys with a prefix in the properties file beyond the options' own
   * (see {@link #extra(CommandSpec)}).
   *
   * @param keyPrefix e.g. {@code pool.}
   * @return a copy
   */
  public EnvironmentDefaults withExtraKeys(String keyPrefix) {
    return new EnvironmentDefaults(prefix, env, fileOption, keyPrefix, fallbacks);
  }

  /**
   * These defaults, with a variable read after the file for one option.
   *
   * @param key the option without {@code --}, e.g. {@code node-name}
   * @param variable the variable, e.g. {@code NODE_NAME}
   * @return a copy
   */
  public EnvironmentDefaults withFallback(String key, String variable) {
    Map<String, String> f = new LinkedHashMap<>(fallbacks);
    f.put(key, variable);
    return new EnvironmentDefaults(prefix, env, fileOption, extraPrefix, f);
  }

  /**
   * The environment variable of an option.
   *
   * @param key the option without {@code --}, e.g. {@code poll-interval}
   * @return e.g. {@code FPGA_POLL_INTERVAL}
   */
  public String variable(String key) {
    return prefix + key.toUpperCase(Locale.ROOT).replace('-', '_');
  }

  /**
   * Says where options not given come from, for the end of {@code --help}.
   *
   * @param command the command
   * @return one paragraph
   */
  public String describe(CommandSpec command) {
    if (prefix.isEmpty() && env.isEmpty()) {
      return "";
    }
    List<String> names =
        command.options().stream()
            .filter(o -> !o.usageHelp() && !o.versionHelp())
            .map(OptionSpec::longestName)
            .filter(n -> !n.equals(fileOption))
            .toList();
    String example =
        names.contains("--poll-interval")
            ? "--poll-interval"
            : names.isEmpty() ? "--root" : names.get(0);
    return "%nAn option not given is read from the environment ("
        + variable(example.substring(2))
        + " for "
        + example
        + ")"
        + (fileOption == null
            ? ""
            : ", then from the properties file of "
                + fileOption
                + " ("
                + example.substring(2)
                + "=...)")
        + ", then takes its default.";
  }

  @Override
  public String defaultValue(ArgSpec arg) {
    if (!(arg instanceof OptionSpec option)
        || option.usageHelp()
        || option.versionHelp()
        || !option.longestName().startsWith("--")) {
      return null;
    }
    String key = key(option);
    String variable = variable(key);
    String value = env(variable);
    if (value != null) {
      sources.put(arg, variable);
      return value;
    }
    if (fileOption != null && !option.longestName().equals(fileOption)) {
      Optional<Path> file = file(arg.command());
      Properties props = file.map(f -> load(f).properties()).orElse(null);
      if (props != null && props.getProperty(key) != null) {
        sources.put(arg, "key " + key + " of " + file.get());
        return props.getProperty(key).trim();
      }
    }
    String shared = fallbacks.get(key);
    if (shared != null && env(shared) != null) {
      sources.put(arg, shared);
      return env(shared);
    }
    sources.remove(arg);
    return null;
  }

  /**
   * Where an option's value came from when not from the command line.
   *
   * @param arg the option
   * @return e.g. {@code FPGA_POLL_INTERVAL}; empty for the command line or the built-in default
   */
  public Optional<String> source(ArgSpec arg) {
    return Optional.ofNullable(sources.get(arg));
  }

  /**
   * Checks the properties file, if there is one: it must be readable and hold only keys of the
   * command's options (and extra keys).
   *
   * @param command the parsed command
   * @throws IOException naming the file when it cannot be read
   * @throws IllegalArgumentException naming an unknown key, the file and the known keys
   */
  public void check(CommandSpec command) throws IOException {
    Optional<Path> file = file(command);
    if (file.isEmpty()) {
      return;
    }
    Loaded loaded = load(file.get());
    if (loaded.failure() != null) {
      throw loaded.failure();
    }
    TreeSet<String> known = new TreeSet<>();
    for (OptionSpec o : command.options()) {
      if (!o.usageHelp() && !o.versionHelp() && !o.longestName().equals(fileOption)) {
        known.add(key(o));
      }
    }
    for (String key : loaded.properties().stringPropertyNames()) {
      if (!known.contains(key) && (extraPrefix == null || !key.startsWith(extraPrefix))) {
        throw new IllegalArgumentException(
            "unknown key '"
                + key
                + "' in "
                + file.get()
                + "; known: "
                + String.join(", ", known)
                + (extraPrefix == null ? "" : ", " + extraPrefix + "*"));
      }
    }
  }

  /**
   * The keys with the extra prefix from the properties file, in no particular order.
   *
   * @param command the parsed command
   * @return key to value; empty without a file or an extra prefix
   */
  public Map<String, String> extra(CommandSpec command) {
    Map<String, String> out = new LinkedHashMap<>();
    Optional<Path> file = file(command);
    if (extraPrefix == null || file.isEmpty() || load(file.get()).properties() == null) {
      return out;
    }
    Properties props = load(file.get()).properties();
    for (String key : new TreeSet<>(props.stringPropertyNames())) {
      if (key.startsWith(extraPrefix)) {
        out.put(key, props.getProperty(key).trim());
      }
    }
    return out;
  }

  /** The file named on the command line, else by the variable, else by the option's default. */
  private Optional<Path> file(CommandSpec command) {
    OptionSpec option = fileOption == null ? null : command.findOption(fileOption);
    if (option == null) {
      return Optional.empty();
    }
    String name;
    List<String> given = option.originalStringValues();
    if (!given.isEmpty()) {
      name = given.get(given.size() - 1);
    } else if (env(variable(key(option))) != null) {
      name = env(variable(key(option)));
    } else {
      name = option.defaultValue();
    }
    return name == null || name.isBlank() ? Optional.empty() : Optional.of(Path.of(name.trim()));
  }

  private Loaded load(Path file) {
    return files.computeIfAbsent(
        file.toString(),
        f -> {
          Properties props = new Properties();
          try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(r);
            return new Loaded(props, null);
          } catch (IOException e) {
            return new Loaded(
                null,
                new IOException("cannot read the config file " + file + ": " + describe(e), e));
          }
        });
  }

  private static String describe(IOException e) {
    if (e instanceof java.nio.file.NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof java.nio.file.AccessDeniedException) {
      return "permission denied";
    }
    return e.toString();
  }

  private String env(String variable) {
    String value = env.get(variable);
    return value == null || value.isBlank() ? null : value.trim();
  }

  private static String key(OptionSpec option) {
    return option.longestName().replaceFirst("^--", "");
  }
}
