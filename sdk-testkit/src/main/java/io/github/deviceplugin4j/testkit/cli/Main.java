package io.github.deviceplugin4j.testkit.cli;

import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The {@code fake-kubelet} command line: {@code serve} and {@code conform}.
 *
 * <pre>
 * java -jar deviceplugin4j-testkit-VERSION-cli.jar serve --dir /tmp/dp
 * java -jar deviceplugin4j-testkit-VERSION-cli.jar conform --junit-xml out.xml -- ./my-plugin
 * </pre>
 *
 * <p>Run without arguments for the full usage.
 */
public final class Main {
  /** Keeps the JUL logger configuration alive (loggers are weakly referenced). */
  private static final Logger ROOT_LOGGER = Logger.getLogger("");

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
   * @param out reports and JSON lines
   * @param err usage errors
   * @return the exit code: 0 success, 1 failed conformance, 2 usage error
   */
  public static int run(String[] args, InputStream in, PrintStream out, PrintStream err) {
    List<String> argv = Arrays.asList(args);
    if (argv.isEmpty()
        || argv.get(0).equals("--help")
        || argv.get(0).equals("-h")
        || argv.get(0).equals("help")) {
      out.print(usage());
      return argv.isEmpty() ? 2 : 0;
    }
    try {
      return switch (argv.get(0)) {
        case "serve" -> new ServeCommand(out).run(argv.subList(1, argv.size()), in);
        case "conform" -> new ConformCommand(out).run(argv.subList(1, argv.size()));
        default -> throw new Args.UsageException("unknown command " + argv.get(0));
      };
    } catch (Args.UsageException e) {
      err.println("fake-kubelet: " + e.getMessage());
      err.println();
      err.print(usage());
      return 2;
    } catch (Exception e) {
      err.println("fake-kubelet: " + e);
      return 2;
    }
  }

  static String usage() {
    return "A fake kubelet for device plugin tests (deviceplugin4j testkit).\n\n"
        + ServeCommand.HELP
        + "\n"
        + String.format(ConformCommand.HELP, ConformCommand.checkList());
  }
}
