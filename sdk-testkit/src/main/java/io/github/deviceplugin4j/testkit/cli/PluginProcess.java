package io.github.deviceplugin4j.testkit.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The plugin under test: a child process whose output is kept (the last lines) for the report.
 *
 * <p>The command runs in a session and process group of its own ({@code setsid}, when the machine
 * has it), and every signal goes to the whole group: a plugin started by a wrapper script without
 * {@code exec}, or one that forks helpers, is stopped with it instead of outliving the run.
 */
final class PluginProcess implements AutoCloseable {
  private static final int KEEP_LINES = 200;
  private static final Optional<Path> SETSID =
      Stream.of("/usr/bin/setsid", "/bin/setsid")
          .map(Path::of)
          .filter(Files::isExecutable)
          .findFirst();
  private static final Optional<Path> KILL =
      Stream.of("/usr/bin/kill", "/bin/kill").map(Path::of).filter(Files::isExecutable).findFirst();

  /** The plugin command cannot be started: the message says why, in one line. */
  static final class StartException extends Exception {
    private static final long serialVersionUID = 1L;

    StartException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final Process process;
  private final boolean ownGroup;
  private final Instant startedAt;
  private final Deque<String> tail = new ArrayDeque<>();
  private final Thread reader;

  private PluginProcess(Process process, boolean ownGroup, PrintStream echo) {
    this.process = process;
    this.ownGroup = ownGroup;
    this.startedAt = Instant.now();
    this.reader = new Thread(() -> read(echo), "plugin-output");
    reader.setDaemon(true);
    reader.start();
  }

  /**
   * Starts the command in a process group of its own.
   *
   * @throws StartException when the program does not exist, is not executable, or cannot start
   */
  static PluginProcess start(List<String> command, Map<String, String> env, PrintStream echo)
      throws StartException {
    String program = command.get(0);
    Map<String, String> environment = new java.util.HashMap<>(System.getenv());
    environment.putAll(env);
    checkProgram(program, environment.getOrDefault("PATH", ""));
    List<String> argv = new ArrayList<>();
    // setsid(1) makes the child a session and process group leader (it does not fork: a child of
    // the JVM is not a group leader), so the group's ID is the child's PID.
    SETSID.ifPresent(p -> argv.add(p.toString()));
    argv.addAll(command);
    ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
    pb.environment().putAll(env);
    pb.redirectInput(ProcessBuilder.Redirect.PIPE);
    try {
      Process p = pb.start();
      p.getOutputStream().close();
      return new PluginProcess(p, SETSID.isPresent() && KILL.isPresent(), echo);
    } catch (IOException e) {
      throw new StartException(
          "cannot start the plugin command " + program + ": " + e.getMessage(), e);
    }
  }

  /** Fails early and clearly for a program that cannot run (setsid would only print an error). */
  private static void checkProgram(String program, String path) throws StartException {
    if (program.contains("/")) {
      Path p = Path.of(program);
      if (!Files.exists(p)) {
        throw new StartException(
            "cannot start the plugin command: " + program + ": no such file", null);
      }
      if (Files.isDirectory(p) || !Files.isExecutable(p)) {
        throw new StartException(
            "cannot start the plugin command: " + program + ": not an executable file", null);
      }
      return;
    }
    for (String dir : path.split(":")) {
      Path p = Path.of(dir.isEmpty() ? "." : dir).resolve(program);
      if (Files.isExecutable(p) && !Files.isDirectory(p)) {
        return;
      }
    }
    throw new StartException(
        "cannot start the plugin command: " + program + ": not found on PATH", null);
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
   * Sends SIGTERM to the plugin's process group and waits until the whole group has exited.
   *
   * @return the started process's exit code, empty when the group did not exit in time
   */
  Optional<Integer> terminate(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    signal("TERM");
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      return Optional.empty();
    }
    // A wrapper script dies at once; the plugin it started is done when the whole group is.
    while (groupAlive() && System.nanoTime() < deadline) {
      Thread.sleep(20); // polling the group: no event tells when its last member exits
    }
    return groupAlive() ? Optional.empty() : Optional.of(process.exitValue());
  }

  /** Signals the process group (or, without setsid, the process and its descendants). */
  private void signal(String name) {
    if (ownGroup) {
      try {
        Process k =
            new ProcessBuilder(KILL.get().toString(), "-s", name, "--", "-" + process.pid())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        k.waitFor(5, TimeUnit.SECONDS);
        return;
      } catch (IOException e) {
        // fall back to the process handles below
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    boolean force = name.equals("KILL");
    process
        .descendants()
        .forEach(
            h -> {
              if (force) {
                h.destroyForcibly();
              } else {
                h.destroy();
              }
            });
    if (force) {
      process.destroyForcibly();
    } else {
      process.destroy();
    }
  }

  /** Whether any process of the plugin's group is still there. */
  private boolean groupAlive() {
    if (!ownGroup) {
      return process.isAlive() || process.descendants().anyMatch(ProcessHandle::isAlive);
    }
    try {
      Process k =
          new ProcessBuilder(KILL.get().toString(), "-0", "--", "-" + process.pid())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      return k.waitFor(5, TimeUnit.SECONDS) && k.exitValue() == 0;
    } catch (IOException e) {
      return process.isAlive();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return process.isAlive();
    }
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

  /**
   * Stops the whole process group: SIGTERM, then SIGKILL for whatever is left after 5 s. A wrapper
   * script's children are in the group too, so none outlives the run.
   */
  @Override
  public void close() {
    signal("TERM");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    try {
      process.waitFor(5, TimeUnit.SECONDS);
      while (groupAlive() && System.nanoTime() < deadline) {
        Thread.sleep(50); // polling the group: no event tells when its last member exits
      }
      if (groupAlive()) {
        signal("KILL");
        process.waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      signal("KILL");
    }
  }
}
