package io.github.deviceplugin4j.benchmarks.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A child process of the harness, usually {@code java} (same {@code java.home}), its output in a
 * log file, and the {@link System#nanoTime()} taken right before {@link ProcessBuilder#start()}.
 * {@link #close()} stops it with SIGTERM and waits up to 10 s, then kills it; a shutdown hook kills
 * every child still running when the harness itself stops, so no process outlives a failed run.
 */
final class JavaProcess implements AutoCloseable {

  /**
   * How long a process gets to exit after SIGTERM before it is killed: a pod's default termination
   * grace period, the bound a node holds a plugin to (a run that writes an archive at exit, on a
   * busy machine, took longer than 10 s).
   */
  static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  private static final Set<Process> RUNNING = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(() -> RUNNING.forEach(Process::destroyForcibly), "bench-children-kill"));
  }

  private final Process process;
  private final long startNanos;
  private final Path log;
  private final List<String> command;

  private JavaProcess(Process process, long startNanos, Path log, List<String> command) {
    this.process = process;
    this.startNanos = startNanos;
    this.log = log;
    this.command = command;
  }

  /** The {@code java} launcher of the running JVM. */
  static String javaBinary() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /**
   * Starts {@code java <flags> <args...>}.
   *
   * @param flags JVM flags
   * @param args what follows the flags: {@code -jar x.jar ...} or {@code -cp ... Main ...}
   * @param env environment entries added to the harness's (after the flag set's own, which they
   *     override)
   * @param log where stdout and stderr go
   * @return the running process
   */
  static JavaProcess start(
      JvmFlags.FlagSet flags, List<String> args, Map<String, String> env, Path log) {
    List<String> cmd = new ArrayList<>();
    cmd.add(flags.java() == null ? javaBinary() : flags.java());
    cmd.addAll(flags.flags());
    cmd.addAll(args);
    Map<String, String> all = new LinkedHashMap<>(flags.env());
    all.putAll(env);
    return exec(cmd, all, log);
  }

  /**
   * Starts any command the same way (output to the log, killed with the harness): the Go programs.
   *
   * @param cmd the command and its arguments
   * @param env environment entries added to the harness's
   * @param log where stdout and stderr go
   * @return the running process
   */
  static JavaProcess exec(List<String> cmd, Map<String, String> env, Path log) {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    pb.redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
    pb.environment().putAll(env);
    long t0 = System.nanoTime();
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + String.join(" ", cmd), e);
    }
    RUNNING.add(p);
    return new JavaProcess(p, t0, log, List.copyOf(cmd));
  }

  /** {@link System#nanoTime()} right before the process was started. */
  long startNanos() {
    return startNanos;
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /**
   * Waits for the process to exit, at most {@code timeout}: a pause that ends early when the
   * process dies.
   *
   * @return true when it exited
   */
  boolean waitFor(Duration timeout) throws InterruptedException {
    return process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** /proc/pid/status now. */
  ProcStatus status() {
    checkAlive("read its memory");
    return ProcStatus.read(process.pid());
  }

  /**
   * Fails with the process's output when it is no longer running.
   *
   * @param doing what the harness was about to do
   */
  void checkAlive(String doing) {
    if (!process.isAlive()) {
      throw new IllegalStateException(
          "the plugin process exited with status "
              + process.exitValue()
              + " before the harness could "
              + doing
              + "; command: "
              + String.join(" ", command)
              + "\n"
              + logTail(30));
    }
  }

  /** The last lines of the process's output, for error messages. */
  String logTail(int lines) {
    try {
      List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
      return "--- last lines of "
          + log
          + " ---\n"
          + String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException | UncheckedIOException e) {
      return "(no output: " + e.getMessage() + ")";
    }
  }

  /**
   * Sends SIGTERM and waits up to {@link #STOP_TIMEOUT}; kills the process when it does not exit.
   *
   * @return the exit status
   * @throws IllegalStateException when the process had to be killed, with its last output
   */
  int stop() throws InterruptedException {
    try {
      process.destroy();
      if (process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
        return process.exitValue();
      }
      process.destroyForcibly().waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      throw new IllegalStateException(
          "the process did not exit within "
              + STOP_TIMEOUT.toSeconds()
              + " s of SIGTERM and was killed; command: "
              + String.join(" ", command)
              + "\n"
              + logTail(30));
    } finally {
      if (!process.isAlive()) {
        RUNNING.remove(process);
      }
    }
  }

  /** Stops the process if it still runs, never throwing (for finally blocks). */
  @Override
  public void close() {
    if (!process.isAlive()) {
      RUNNING.remove(process);
      return;
    }
    try {
      stop();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    } catch (IllegalStateException killed) {
      // reported by stop() callers; close() only guarantees the process is gone
    } finally {
      if (!process.isAlive()) {
        RUNNING.remove(process);
      }
    }
  }
}
