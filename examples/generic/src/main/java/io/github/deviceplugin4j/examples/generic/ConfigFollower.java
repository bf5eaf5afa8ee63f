package io.github.deviceplugin4j.examples.generic;

import io.github.deviceplugin4j.examples.generic.GenericConfig.ConfigException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows the generic plugin's configuration file and hands every good new version to a consumer
 * (the device plugin's hosts, or the DRA driver's devices). A file that cannot be read or parsed,
 * or that the consumer refuses by throwing, is logged with the key that is wrong and the last good
 * configuration keeps serving.
 *
 * <p>The file's directory is watched, not the file: editors and ConfigMap updates replace the file
 * (a symlink swap). After an event the directory must be quiet for {@link #QUIET} before the file
 * is read, so a file written in several steps is not read half-written; the file is also read again
 * every poll interval (at least a second) in case an event was missed.
 */
public final class ConfigFollower implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ConfigFollower.class);

  /** How long the config directory must be quiet after a change before the file is read. */
  static final Duration QUIET = Duration.ofMillis(200);

  private final Path file;
  private final Duration pollInterval;
  private final Consumer<GenericConfig> target;
  private final WatchService watcher;
  private final Thread watchThread;
  private String lastText;
  private volatile GenericConfig current;
  private volatile String lastError = "";
  private volatile boolean closed;

  private ConfigFollower(Path file, Duration pollInterval, Consumer<GenericConfig> target)
      throws IOException {
    this.file = file.toAbsolutePath();
    this.pollInterval = pollInterval;
    this.target = target;
    this.watcher = FileSystems.getDefault().newWatchService();
    this.file
        .getParent()
        .register(
            watcher,
            StandardWatchEventKinds.ENTRY_CREATE,
            StandardWatchEventKinds.ENTRY_MODIFY,
            StandardWatchEventKinds.ENTRY_DELETE);
    this.watchThread = new Thread(this::watch, "generic-config-watch");
    this.watchThread.setDaemon(true);
  }

  /**
   * Reads the file, hands its configuration to the target and starts following the file.
   *
   * @param file the YAML or JSON file
   * @param pollInterval how often the file is read again without an event (at least 1 s)
   * @param target applies a configuration; throws a {@link RuntimeException} to refuse it
   * @return the follower, running
   * @throws ConfigException when the first configuration is unusable; nothing is applied then
   * @throws IOException when the file cannot be read or its directory watched
   */
  public static ConfigFollower start(
      Path file, Duration pollInterval, Consumer<GenericConfig> target)
      throws ConfigException, IOException {
    ConfigFollower follower =
        new ConfigFollower(
            Objects.requireNonNull(file, "file"),
            Objects.requireNonNull(pollInterval, "pollInterval"),
            Objects.requireNonNull(target, "target"));
    try {
      String text = Files.readString(follower.file, StandardCharsets.UTF_8);
      GenericConfig config = GenericConfig.parse(text);
      synchronized (follower) {
        target.accept(config);
        follower.current = config;
        follower.lastText = text;
      }
    } catch (ConfigException | IOException | RuntimeException e) {
      follower.close();
      throw e;
    }
    follower.watchThread.start();
    return follower;
  }

  /**
   * Reads the file again and applies it when it changed. A file that cannot be read or parsed, or
   * that the target refuses, is logged and refused; the last good configuration keeps serving.
   *
   * @return true when a new configuration was applied
   */
  public synchronized boolean reload() {
    if (closed) {
      return false;
    }
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      refuse("cannot read " + file + ": " + e);
      return false;
    }
    if (text.equals(lastText)) {
      return false;
    }
    lastText = text;
    GenericConfig config;
    try {
      config = GenericConfig.parse(text);
    } catch (ConfigException e) {
      refuse(e.getMessage());
      return false;
    }
    try {
      target.accept(config);
    } catch (RuntimeException e) {
      refuse("cannot serve it: " + e.getMessage());
      return false;
    }
    current = config;
    lastError = "";
    log.info("Applied the new configuration of {}", file);
    return true;
  }

  private void refuse(String problem) {
    lastError = problem;
    log.error(
        "Refused the configuration in {}: {}; the previous configuration keeps serving",
        file,
        problem);
  }

  /**
   * The configuration being served.
   *
   * @return the last good configuration
   */
  public GenericConfig config() {
    return current;
  }

  /**
   * Why the last change of the file was refused.
   *
   * @return the problem, naming the key; empty after a good file
   */
  public String lastError() {
    return lastError;
  }

  private void watch() {
    long pollMillis = Math.max(1000, pollInterval.toMillis());
    while (!closed) {
      try {
        var key = watcher.poll(pollMillis, TimeUnit.MILLISECONDS);
        // A write in several steps (truncate, then write) gives several events: wait until the
        // directory is quiet for QUIET, so a half-written file is not read and refused.
        while (key != null) {
          key.pollEvents();
          key.reset();
          key = watcher.poll(QUIET.toMillis(), TimeUnit.MILLISECONDS);
        }
        // Also on timeouts: a safety check for missed events.
        reload();
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      } catch (RuntimeException e) {
        log.error("Reloading {} failed; the previous configuration keeps serving", file, e);
      }
    }
  }

  /** Stops following the file; the target is left as it is. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    try {
      watcher.close();
    } catch (IOException e) {
      log.debug("closing the watch service", e);
    }
    watchThread.interrupt();
  }
}
