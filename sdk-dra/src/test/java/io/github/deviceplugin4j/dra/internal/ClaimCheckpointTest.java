package io.github.deviceplugin4j.dra.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.dra.Claim;
import io.github.deviceplugin4j.dra.PreparedDevice;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClaimCheckpointTest {

  @TempDir Path dir;

  private static Map<String, PreparedClaim> twoClaims() {
    Map<String, PreparedClaim> claims = new LinkedHashMap<>();
    claims.put(
        "u-2",
        new PreparedClaim(
            new Claim("ns", "u-2", "quote\"and\\slash"),
            List.of(
                new PreparedDevice(
                    List.of("r1", "r2/sub"), "pool", "dev-1", List.of("v.com/c=x", "v.com/c=y")))));
    claims.put("u-1", new PreparedClaim(new Claim("ns", "u-1", "plain"), List.of()));
    return claims;
  }

  @Test
  void whatIsWrittenIsReadBackInOrderByAnotherInstance() throws IOException {
    new ClaimCheckpoint(dir).write(twoClaims());

    Map<String, PreparedClaim> read = new ClaimCheckpoint(dir).read();

    assertThat(read).containsExactlyEntriesOf(twoClaims());
  }

  @Test
  void noFileMeansNothingPrepared() throws IOException {
    assertThat(new ClaimCheckpoint(dir).read()).isEmpty();
  }

  @Test
  void aWriteLeavesNoTemporaryFileBehind() throws IOException {
    new ClaimCheckpoint(dir).write(twoClaims());

    try (var files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .containsExactly(ClaimCheckpoint.FILE_NAME);
    }
  }

  @Test
  void theCheckpointIsReadableByItsOwnerOnlyEvenAfterACrashLeftALooserTemporaryFile()
      throws IOException {
    Path leftover = dir.resolve("." + ClaimCheckpoint.FILE_NAME + ".tmp");
    Files.writeString(leftover, "half a write");
    Files.setPosixFilePermissions(leftover, PosixFilePermissions.fromString("rw-rw-rw-"));

    new ClaimCheckpoint(dir).write(twoClaims());

    Set<PosixFilePermission> mode =
        Files.getPosixFilePermissions(dir.resolve(ClaimCheckpoint.FILE_NAME));
    assertThat(mode)
        .isNotEmpty()
        .isSubsetOf(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
    assertThat(new ClaimCheckpoint(dir).read()).containsExactlyEntriesOf(twoClaims());
  }

  @Test
  void aChangeSeenThroughAnotherInstanceIsReadAgain() throws IOException {
    ClaimCheckpoint mine = new ClaimCheckpoint(dir);
    mine.write(twoClaims());
    mine.read();

    new ClaimCheckpoint(dir).write(Map.of());

    assertThat(mine.read()).isEmpty();
  }

  @Test
  void aFileOfAnotherFormatVersionIsRefusedWithTheReason() throws IOException {
    new ClaimCheckpoint(dir).write(twoClaims());
    Path file = dir.resolve(ClaimCheckpoint.FILE_NAME);
    Files.writeString(file, Files.readString(file).replace("\"version\":1", "\"version\":2"));

    assertThatThrownBy(() -> new ClaimCheckpoint(dir).read())
        .isInstanceOf(IOException.class)
        .hasMessageContaining("format version 2")
        .hasMessageContaining(file.toString());
  }

  @Test
  void aTruncatedFileIsRefused() throws IOException {
    new ClaimCheckpoint(dir).write(twoClaims());
    Path file = dir.resolve(ClaimCheckpoint.FILE_NAME);
    String content = Files.readString(file);
    Files.writeString(file, content.substring(0, content.length() - 5));

    assertThatThrownBy(() -> new ClaimCheckpoint(dir).read())
        .isInstanceOf(IOException.class)
        .hasMessageContaining("checksum");
  }
}
