package io.github.deviceplugin4j.testkit.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/** The plugin under test: a child process whose output is kept (the last lines) for the report. */
final class PluginProcess implements AutoCloseable {
  private static final int KEEP_LINES = 200;

  private final Process process;
  private final Instant startedAt;
  private final Deque<String> tail = new ArrayDeque<>();
  private final Thread reader;

  private PluginProcess(Process process, PrintStream echo) {
    this.process = process;
    this.startedAt = Instant.now();
    this.reader = new Thread(() -> read(echo), "plugin-output");
    reader.setDaemon(true);
    reader.start();
  }

  static PluginProcess start(List<String> command, Map<String, String> env, PrintStream echo) {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.environment().putAll(env);
    pb.redirectInput(ProcessBuilder.Redirect.PIPE);
    try {
      Process p = pb.start();
      p.getOutputStream().close();
      return new PluginProcess(p, echo);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot start the plugin command " + command + ": " + e.getMessage(), e);
    }
  }

  private void read(PrintStream echo) {
    try (BufferedReader r =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = r.readLine()) != null) {
        synchronized (tail) {
          tail.addLast(line);
          if (tail.size() > KEEP_LINES) {
            tail.removeFirst();
          }
        }
        if (echo != null) {
          echo.println("[plugin] " + line);
        }
      }
    } catch (IOException e) {
      // the process ended
    }
  }

  Instant startedAt() {
    return startedAt;
  }

  long pid() {
    return process.pid();
  }

  Optional<Integer> exitCode() {
    return process.isAlive() ? Optional.empty() : Optional.of(process.exitValue());
  }

  /**
   * Sends SIGTERM and waits.
   *
   * @return the exit code, empty when the process did not exit in time
   */
  Optional<Integer> terminate(Duration timeout) throws InterruptedException {
    process.destroy();
    if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      return Optional.of(process.exitValue());
    }
    return Optional.empty();
  }

  List<String> outputTail(int lines) {
    try {
      reader.join(200);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (tail) {
      List<String> all = new ArrayList<>(tail);
      return all.subList(Math.max(0, all.size() - lines), all.size());
    }
  }

  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
  }
}
