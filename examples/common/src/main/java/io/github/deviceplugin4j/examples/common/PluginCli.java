package io.github.deviceplugin4j.examples.common;

import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.ExecutionException;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

/**
 * The examples' command line, one convention for every program: {@code --help} and {@code
 * --version} print and exit 0; {@code --flag value} and {@code --flag=value}; options not given
 * come from the environment and a properties file ({@link EnvironmentDefaults}); a usage error
 * prints one line naming the flag and what to do, and exits {@value #USAGE}; a failure while
 * running prints one line, and exits {@value #FAILURE}; never a stack trace. The command is a
 * picocli {@code @Command} whose {@code call()} runs the program.
 *
 * <pre>{@code
 * public static void main(String[] args) {
 *   EnvironmentDefaults defaults = EnvironmentDefaults.of("FPGA_", System.getenv());
 *   System.exit(PluginCli.execute(new FpgaPlugin(), defaults, args));
 * }
 * }</pre>
 */
public final class PluginCli {

  /** The exit code of a clean stop (SIGTERM, SIGINT), {@code --help} and {@code --version}. */
  public static final int OK = 0;

  /** The exit code of a failure while running: a file, directory or socket that does not work. */
  public static final int FAILURE = 1;

  /** The exit code of a usage error: an unknown flag, a bad value, a missing setting. */
  public static final int USAGE = 2;

  /**
   * The exit code line of a program that runs {@code DevicePluginHost.Builder#run()}, for
   * {@code @Command(exitCodeList = PluginCli.HOST_FATAL)}.
   */
  public static final String HOST_FATAL =
      "70:a fatal failure inside the SDK (DevicePluginHost.EXIT_FATAL): the pod restarts";

  private PluginCli() {}

  /**
   * Runs a command with the process's streams.
   *
   * @param command the {@code @Command} object
   * @param defaults where options not given come from
   * @param args the command line
   * @return the exit code, for {@code System.exit}
   */
  public static int execute(Object command, EnvironmentDefaults defaults, String... args) {
    return commandLine(command, defaults).execute(args);
  }

  /**
   * Runs a command with other streams (tests).
   *
   * @param command the {@code @Command} object
   * @param defaults where options not given come from
   * @param out where help and version go
   * @param err where errors go
   * @param args the command line
   * @return the exit code
   */
  public static int execute(
      Object command,
      EnvironmentDefaults defaults,
      PrintWriter out,
      PrintWriter err,
      String... args) {
    CommandLine cl = commandLine(command, defaults);
    cl.setOut(out);
    cl.setErr(err);
    return cl.execute(args);
  }

  /**
   * Parses a command line into a command without running it (tests and {@code parse} methods).
   *
   * @param command the {@code @Command} object
   * @param defaults where options not given come from
   * @param args the command line
   * @param <T> the command's type
   * @return {@code command}, its options set
   * @throws IllegalArgumentException naming the bad flag, value, file or key
   */
  public static <T> T parse(T command, EnvironmentDefaults defaults, String... args) {
    CommandLine cl = commandLine(command, defaults);
    try {
      cl.parseArgs(args);
      defaults.check(cl.getCommandSpec());
    } catch (ParameterException e) {
      throw new IllegalArgumentException(usageMessage(e, defaults), e);
    } catch (IOException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
    return command;
  }

  /**
   * Builds the program's settings from its options, turning a refused value into a usage error
   * (exit {@value #USAGE}) instead of a failure.
   *
   * @param spec the command's spec ({@code @Spec CommandSpec spec})
   * @param settings builds the settings; throws {@link IllegalArgumentException} naming what is
   *     wrong
   * @param <C> the settings' type
   * @return the settings
   * @throws ParameterException with the refusal's message
   */
  public static <C> C settings(CommandSpec spec, Supplier<C> settings) {
    try {
      return settings.get();
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage(), e);
    }
  }

  /**
   * A picocli command line with the examples' conventions, for callers that need more control.
   *
   * @param command the {@code @Command} object
   * @param defaults where options not given come from
   * @return the command line
   */
  public static CommandLine commandLine(Object command, EnvironmentDefaults defaults) {
    CommandLine cl = new CommandLine(command);
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    cl.registerConverter(Duration.class, new Durations());
    cl.setDefaultValueProvider(defaults);
    cl.setParameterExceptionHandler(
        (e, args) -> {
          PrintWriter err = e.getCommandLine().getErr();
          String name = e.getCommandLine().getCommandSpec().qualifiedName();
          err.println(name + ": " + usageMessage(e, defaults));
          UnmatchedArgumentException.printSuggestions(e, err);
          err.println("Run '" + name + " --help' for the options.");
          err.flush();
          return USAGE;
        });
    cl.setExecutionExceptionHandler(
        (e, c, parsed) -> {
          c.getErr().println(c.getCommandSpec().qualifiedName() + ": " + oneLine(e));
          c.getErr().flush();
          return FAILURE;
        });
    cl.setExecutionStrategy(
        parsed -> {
          if (!parsed.isUsageHelpRequested() && !parsed.isVersionHelpRequested()) {
            check(parsed, defaults);
          }
          return new CommandLine.RunLast().execute(parsed);
        });
    cl.setUsageHelpWidth(100);
    CommandSpec spec = cl.getCommandSpec();
    Map<String, String> codes = exitCodes();
    codes.putAll(spec.usageMessage().exitCodeList());
    spec.usageMessage().exitCodeListHeading("%nExit codes:%n").exitCodeList(codes);
    if (spec.usageMessage().footer().length == 0 && !defaults.describe(spec).isEmpty()) {
      spec.usageMessage().footer(defaults.describe(spec));
    }
    return cl;
  }

  /**
   * The exit codes every example documents at the end of its {@code --help}; a command adds its
   * own, or words one differently, with {@code @Command(exitCodeList = "70:...")}.
   *
   * @return code to meaning, in order
   */
  public static Map<String, String> exitCodes() {
    Map<String, String> codes = new LinkedHashMap<>();
    codes.put(OK + "", "stopped by SIGTERM or SIGINT; --help, --version");
    codes.put(FAILURE + "", "failed while running (one line says why): config file, root, sockets");
    codes.put(USAGE + "", "usage error: an unknown flag or a bad value (one line names it)");
    return codes;
  }

  private static void check(ParseResult parsed, EnvironmentDefaults defaults) {
    CommandLine cl = parsed.commandSpec().commandLine();
    try {
      defaults.check(parsed.commandSpec());
    } catch (IOException e) {
      throw new ExecutionException(cl, e.getMessage(), e);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(cl, e.getMessage(), e);
    }
  }

  private static String usageMessage(ParameterException e, EnvironmentDefaults defaults) {
    String message = e.getMessage();
    if (e.getArgSpec() != null && e.getArgSpec().originalStringValues().isEmpty()) {
      message += defaults.source(e.getArgSpec()).map(s -> " (set by " + s + ")").orElse("");
    }
    return message;
  }

  /**
   * An exception as one line: its message and its causes' where they add something.
   *
   * @param e the exception
   * @return e.g. {@code cannot bind /x/fpga.sock: Permission denied}
   */
  public static String oneLine(Throwable e) {
    StringBuilder line = new StringBuilder();
    for (Throwable t = e; t != null && t != t.getCause(); t = t.getCause()) {
      if (t instanceof ExecutionException && t.getCause() != null) {
        continue;
      }
      String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
      if (line.indexOf(m) < 0) {
        line.append(line.length() == 0 ? "" : ": ").append(m);
      }
    }
    return line.toString().replaceAll("\\s*\\R\\s*", "; ");
  }
}
