package io.github.deviceplugin4j.core;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A file that exists exactly while every resource of a host is registered with the kubelet, for a
 * DaemonSet's readiness probe ({@code exec: [test, -f, <file>]}), which cannot call into the JVM.
 *
 * <p>The file is written once the last of the listed resources has registered (atomically: written
 * beside it, then renamed over it, so a probe never sees a half-written file) and holds the
 * registered resource names, one a line. It is deleted when any resource loses the kubelet, written
 * again when that resource has registered again, and deleted when the host stops ({@link
 * #onStopped()}). A file left by an earlier run is deleted when this object is created. A file that
 * cannot be written or deleted is logged as a warning; the plugin keeps running.
 *
 * <pre>{@code
 * DevicePluginHost.builder()
 *     .backend(backend)
 *     .listener(new ReadinessFile(Path.of("/tmp/plugin.ready"), List.of(backend.resourceName())))
 *     .run();
 * }</pre>
 *
 * <p>and in the DaemonSet:
 *
 * <pre>
 * readinessProbe:
 *   exec:
 *     command: ["test", "-f", "/tmp/plugin.ready"]
 * </pre>
 */
public final class ReadinessFile implements PluginListener {

  private static final Logger LOG = LoggerFactory.getLogger(ReadinessFile.class);

  private final Path file;
  private final Path temporary;
  private final Set<String> expected;
  private final Set<String> registered = new TreeSet<>();
  private boolean stopped;

  /**
   * A readiness file for some resources; deletes a file left at that path by an earlier run.
   *
   * @param file the file to write; its directory is created when missing
   * @param resourceNames every resource the host serves (usually each backend's {@link
   *     DeviceBackend#resourceName()}); the file is written once all of them are registered
   * @throws IllegalArgumentException when {@code resourceNames} is empty
   */
  public ReadinessFile(Path file, Collection<String> resourceNames) {
    this.file = Objects.requireNonNull(file, "file").toAbsolutePath();
    Objects.requireNonNull(resourceNames, "resourceNames");
    if (resourceNames.isEmpty()) {
      throw new IllegalArgumentException(
          "resourceNames is empty: list the resources the host serves, or the file would be"
              + " written at the first registration of any of them");
    }
    this.expected = new TreeSet<>(resourceNames);
    this.temporary = this.file.resolveSibling("." + this.file.getFileName() + ".tmp");
    delete();
  }

  /**
   * The file this listener writes.
   *
   * @return its absolute path
   */
  public Path file() {
    return file;
  }

  /** Writes the file when this registration completes the set of resources. */
  @Override
  public synchronized void onRegistered(
      String resourceName, RegistrationMode mode, boolean reRegistration) {
    if (stopped) {
      return;
    }
    registered.add(resourceName);
    if (registered.containsAll(expected)) {
      write();
    }
  }

  /** Deletes the file: the host is not ready until this resource has registered again. */
  @Override
  public synchronized void onKubeletLost(String resourceName) {
    registered.remove(resourceName);
    delete();
  }

  /** Deletes the file for good: the host stopped. */
  @Override
  public synchronized void onStopped() {
    stopped = true;
    registered.clear();
    delete();
  }

  private void write() {
    try {
      Files.createDirectories(file.getParent());
      Files.write(temporary, List.copyOf(registered), StandardCharsets.UTF_8);
      Files.move(
          temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "Cannot write the readiness file {}: {}; the readiness probe will fail until it can be"
              + " written (check that its directory is writable)",
          file,
          e.toString());
      deleteQuietly(temporary);
    }
  }

  private void delete() {
    try {
      Files.deleteIfExists(file);
    } catch (IOException | RuntimeException e) {
      LOG.warn(
          "Cannot delete the readiness file {}: {}; the readiness probe may pass while the plugin"
              + " is not registered",
          file,
          e.toString());
    }
  }

  private static void deleteQuietly(Path path) {
    try {
      Files.deleteIfExists(path);
    } catch (IOException | RuntimeException e) {
      // nothing more to do: the warning about the write was logged
    }
  }
}
