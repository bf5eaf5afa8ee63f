package io.github.deviceplugin4j.cdi;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Objects;
import java.util.Set;

/**
 * A directory of CDI spec files that container runtimes read, by default {@code /var/run/cdi}.
 *
 * <p>{@link #write(CdiSpec)} is atomic: the spec is written to a hidden temporary file in the same
 * directory (runtimes only read {@code *.json} and {@code *.yaml}), given mode 0644, and renamed
 * over the old file, so a runtime never reads a half-written spec.
 */
public final class CdiSpecDirectory {

  /** Where dynamically generated CDI specs live on a node. */
  public static final Path DEFAULT_DIRECTORY = Path.of("/var/run/cdi");

  private static final Set<PosixFilePermission> MODE_0644 =
      PosixFilePermissions.fromString("rw-r--r--");

  private final Path directory;

  private CdiSpecDirectory(Path directory) {
    this.directory = directory;
  }

  /**
   * The node's dynamic CDI directory, {@code /var/run/cdi}.
   *
   * @return the directory
   */
  public static CdiSpecDirectory defaultDirectory() {
    return new CdiSpecDirectory(DEFAULT_DIRECTORY);
  }

  /**
   * Another directory, e.g. a temporary one in tests or {@code /etc/cdi} for static specs.
   *
   * @param directory the directory; created on the first write if missing
   * @return the directory
   */
  public static CdiSpecDirectory at(Path directory) {
    return new CdiSpecDirectory(Objects.requireNonNull(directory, "directory"));
  }

  /**
   * The directory's path.
   *
   * @return the path
   */
  public Path path() {
    return directory;
  }

  /**
   * Where the spec of a kind lives.
   *
   * @param kind {@code vendor/class}
   * @return the spec file's path
   */
  public Path fileFor(String kind) {
    return directory.resolve(CdiSpec.fileNameFor(Objects.requireNonNull(kind, "kind")));
  }

  /**
   * Where a transient spec of a kind lives: one of several specs of the same kind, each for a
   * short-lived purpose such as one DRA claim, named the way the CDI tooling names transient specs,
   * {@code vendor-class_<id>.json}.
   *
   * @param kind {@code vendor/class}
   * @param transientId what the spec is for, e.g. {@code claim-<uid>}: letters, digits, {@code -},
   *     {@code _} and {@code .}
   * @return the spec file's path
   * @throws IllegalArgumentException if the ID is empty or has other characters
   */
  public Path fileFor(String kind, String transientId) {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(transientId, "transientId");
    if (transientId.isEmpty() || !transientId.matches("[A-Za-z0-9_.-]+")) {
      throw new IllegalArgumentException(
          "transient CDI spec ID '"
              + transientId
              + "' must be letters, digits, '-', '_' and '.' only, e.g. claim-<uid>");
    }
    return directory.resolve(kind.replace('/', '-') + "_" + transientId + ".json");
  }

  /**
   * Writes a spec atomically with mode 0644, replacing an earlier one of the same kind.
   *
   * @param spec the spec
   * @return the file written
   * @throws IOException if the directory cannot be created or written; the message names the path
   */
  public Path write(CdiSpec spec) throws IOException {
    return writeTo(spec, fileFor(spec.kind()));
  }

  /**
   * Writes a transient spec atomically with mode 0644 (see {@link #fileFor(String, String)}),
   * replacing an earlier one with the same kind and ID. Transient specs of one kind may coexist, so
   * their device names must differ across all of them.
   *
   * @param spec the spec
   * @param transientId what the spec is for, e.g. {@code claim-<uid>}
   * @return the file written
   * @throws IOException if the directory cannot be created or written; the message names the path
   */
  public Path write(CdiSpec spec, String transientId) throws IOException {
    return writeTo(spec, fileFor(spec.kind(), transientId));
  }

  /**
   * Removes a transient spec.
   *
   * @param kind {@code vendor/class}
   * @param transientId the ID it was written with
   * @return whether a file was removed; false when there was none
   * @throws IOException if the file exists but cannot be removed
   */
  public boolean remove(String kind, String transientId) throws IOException {
    return Files.deleteIfExists(fileFor(kind, transientId));
  }

  private Path writeTo(CdiSpec spec, Path target) throws IOException {
    Files.createDirectories(directory);
    Path temp = Files.createTempFile(directory, "." + target.getFileName() + ".", ".tmp");
    try {
      Files.writeString(temp, spec.toJson(), StandardCharsets.UTF_8);
      Files.setPosixFilePermissions(temp, MODE_0644);
      try {
        Files.move(
            temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        throw new IOException(
            "cannot replace "
                + target
                + " atomically; is "
                + directory
                + " on a special file system?",
            e);
      }
      return target;
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  /**
   * Removes the spec of a kind.
   *
   * @param kind {@code vendor/class}
   * @return whether a file was removed
   * @throws IOException if the file exists but cannot be removed
   */
  public boolean remove(String kind) throws IOException {
    return Files.deleteIfExists(fileFor(kind));
  }
}
