package io.github.deviceplugin4j.examples.common;

import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/**
 * The options of every example that reads a node's {@code sys/} and {@code dev/}, as a picocli
 * mixin: where they are, and how often they are read again.
 *
 * <pre>{@code
 * @Mixin ScanOptions scan;
 * ...
 * new FpgaConfig(scan.root(), mode, domain, scan.pollInterval(), ...);
 * }</pre>
 */
public final class ScanOptions {
  @Option(
      names = "--root",
      paramLabel = "DIR",
      defaultValue = "/",
      description =
          "Where sys/ and dev/ are found (/host in the images). Default: ${DEFAULT-VALUE}.")
  Path root;

  @Option(
      names = "--poll-interval",
      paramLabel = "DURATION",
      defaultValue = "5s",
      description = "How often devices are read again: 5s, 500ms, 1m. Default: ${DEFAULT-VALUE}.")
  Duration pollInterval;

  /** Creates the options; picocli sets them. */
  public ScanOptions() {}

  /**
   * Where {@code sys/} and {@code dev/} are.
   *
   * @return the root directory
   */
  public Path root() {
    return root;
  }

  /**
   * How often devices are read again.
   *
   * @return a positive duration
   */
  public Duration pollInterval() {
    return pollInterval;
  }
}
