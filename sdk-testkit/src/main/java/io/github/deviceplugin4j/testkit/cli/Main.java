package io.github.deviceplugin4j.testkit.cli;

import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.logging.Level;
import java.util.logging.Logger;
import picocli.CommandLine;

/**
 * The {@code fake-kubelet} command line: {@code serve} and {@code conform}, parsed with picocli.
 *
 * <pre>
 * java -jar deviceplugin4j-testkit-VERSION-cli.jar serve --dir /tmp/dp
 * java -jar deviceplugin4j-testkit-VERSION-cli.jar conform --junit-xml out.xml -- ./my-plugin
 * java -jar deviceplugin4j-testkit-VERSION-cli.jar conform --help
 * </pre>
 *
 * <p>Exit codes: 0 success ({@code --help} and {@code --version} too), 1 a runtime failure or a
 * failed conformance check, 2 a usage error (the message names the option).
 */
public final class Main {
  /** Keeps the JUL logger configuration alive (loggers are weakly referenced). */
  private static final Logger ROOT_LOGGER = Logger.getLogger("");

  /** Exit code of a run that did what was asked. */
  static final int OK = 0;

  /** Exit code of a runtime failure or a failed conformance check. */
  static final int FAILED = 1;

  /** Exit code of a usage error: an unknown option, a bad value, a missing argument. */
  static final int USAGE = 2;

  private Main() {}

  /**
   * Runs the command and exits with its exit code.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    // No SLF4J backend ships in the jar: keep Netty on JUL, and JUL quiet unless something breaks.
    InternalLoggerFactory.setDefaultFactory(JdkLoggerFactory.INSTANCE);
    ROOT_LOGGER.setLevel(Level.SEVERE);
    System.exit(run(args, System.in, System.out, System.err));
  }

  /**
   * Runs the command without exiting (for tests and embedding).
   *
   * @param args the command line
   * @param in commands for {@code serve}
   * @param out reports, JSON lines, help and version
   * @param err errors
   * @return the exit code: 0 success, 1 runtime failure or failed conformance, 2 usage error
   */
  public static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
    PrintWriter outWriter =
        new PrintWriter(new java.io.OutputStreamWriter(out, StandardCharsets.UTF_8), true);
    PrintWriter errWriter =
        new PrintWriter(new java.io.OutputStreamWriter(err, StandardCharsets.UTF_8), true);
    CommandLine cl = commandLine(in, out);
    cl.setOut(outWriter);
    cl.setErr(errWriter);
    int code = cl.execute(args);
    outWriter.flush();
    errWriter.flush();
    return code;
  }

  /** The command tree, with the project's exit codes and one-line error handling. */
  static CommandLine commandLine(InputStream in, PrintStream out) {
    CommandLine cl = new CommandLine(new FakeKubeletCommand());
    cl.addSubcommand("serve", new ServeCommand(out, in));
    cl.addSubcommand("conform", new ConformCommand(out));
    cl.getSubcommands()
        .get("conform")
        .getCommandSpec()
        .usageMessage()
        .footer(ConformCommand.footer());
    cl.setParameterExceptionHandler(Main::usageError);
    cl.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + oneLine(e));
          return FAILED;
        });
    return cl;
  }

  /** A usage error: the message (it names the option), where to read more, exit code 2. */
  private static int usageError(CommandLine.ParameterException e, String[] args) {
    CommandLine cmd = e.getCommandLine();
    PrintWriter err = cmd.getErr();
    err.println(cmd.getCommandSpec().qualifiedName() + ": " + e.getMessage());
    CommandLine.UnmatchedArgumentException.printSuggestions(e, err);
    err.println("Run '" + cmd.getCommandSpec().qualifiedName() + " --help' for the options.");
    return USAGE;
  }

  /** An exception as one line: its message (or its type when it has none), no stack trace. */
  static String oneLine(Throwable e) {
    String m = e.getMessage();
    if (m == null || m.isBlank()) {
      m = e.getClass().getSimpleName();
    }
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }

  /** What {@code --version} prints, for the program and each subcommand. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = "unknown";
      try (InputStream s = Main.class.getResourceAsStream("fake-kubelet.properties")) {
        if (s != null) {
          java.util.Properties p = new java.util.Properties();
          p.load(s);
          v = p.getProperty("version", v);
        }
      } catch (java.io.IOException e) {
        // keep "unknown"
      }
      return new String[] {
        "fake-kubelet (deviceplugin4j testkit) " + v,
        "Java "
            + System.getProperty("java.version")
            + " ("
            + System.getProperty("java.vendor")
            + ")"
      };
    }
  }

  /** The program without a subcommand. */
  @CommandLine.Command(
      name = "fake-kubelet",
      mixinStandardHelpOptions = true,
      versionProvider = Version.class,
      description = {
        "A fake kubelet for device plugin tests (deviceplugin4j testkit): it behaves like the"
            + " kubelet's device manager over real Unix sockets and real gRPC, for plugins"
            + " written in any language. Run 'fake-kubelet COMMAND --help' for a command's"
            + " options."
      },
      exitCodeListHeading = "%nExit codes:%n",
      exitCodeList = {
        "0:success (also --help and --version)",
        "1:a runtime failure, or (conform) a failed check",
        "2:a usage error: unknown option, bad value, missing argument or command"
      })
  static final class FakeKubeletCommand implements java.util.concurrent.Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "a command is needed: serve or conform");
    }
  }
}
