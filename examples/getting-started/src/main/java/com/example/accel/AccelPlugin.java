package com.example.accel;

import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.ReadinessFile;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** The plugin's entry point: {@code accel-plugin [ROOT]}, ROOT defaulting to {@code /}. */
@Command(
    name = "accel-plugin",
    mixinStandardHelpOptions = true,
    version = "accel-plugin 1.0",
    description = "Serves example.com/accel until SIGTERM.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:stopped by SIGTERM or SIGINT", "1:failed while running", "2:usage error"})
public final class AccelPlugin implements Callable<Integer> {

  /** Exists while example.com/accel is registered with the kubelet: for a readiness probe. */
  public static final Path READY_FILE = Path.of("/tmp/accel.ready");

  @Parameters(
      arity = "0..1",
      paramLabel = "ROOT",
      defaultValue = "/",
      description = "Where dev/ and sys/ are read from. Default: /.")
  Path root;

  /**
   * Serves example.com/accel until SIGTERM; {@code --help} and {@code --version} print and exit.
   *
   * @param args optionally the root directory to read {@code dev/} and {@code sys/} from
   */
  public static void main(String[] args) {
    System.exit(
        new CommandLine(new AccelPlugin())
            .setExecutionExceptionHandler(
                (e, cmd, parsed) -> {
                  cmd.getErr().println("accel-plugin: " + e.getMessage()); // one line, no trace
                  return 1;
                })
            .execute(args));
  }

  @Override
  public Integer call() {
    plugin(root, READY_FILE).run();
    return 0;
  }

  /**
   * The plugin, ready to start or run.
   *
   * @param root where {@code dev/} and {@code sys/} are
   * @param readyFile the file that exists while the resource is registered
   * @return the host's builder
   */
  public static DevicePluginHost.Builder plugin(Path root, Path readyFile) {
    AccelBackend backend = new AccelBackend(root);
    return DevicePluginHost.builder()
        .backend(backend)
        .listener(new ReadinessFile(readyFile, List.of(backend.resourceName())));
  }
}
