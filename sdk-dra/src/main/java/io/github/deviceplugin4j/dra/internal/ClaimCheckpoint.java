package io.github.deviceplugin4j.dra.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.github.deviceplugin4j.dra.Claim;
import io.github.deviceplugin4j.dra.PreparedDevice;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The prepared claims of a driver, in a file of the plugin directory that every instance of the
 * driver shares. Written atomically (a temporary file, fsync, rename, fsync of the directory), so a
 * reader sees the old or the new content, never a mix. The file has mode {@code 0600} (less if the
 * umask says so) from its creation on. Format: a header line {@code {"version":1,"sha256":"<hex>"}}
 * and then a JSON array of claims whose bytes the checksum covers.
 *
 * <p>Not thread-safe, and only consistent across processes under the driver's {@link ClaimLock}.
 * Reads are cached: the file is parsed again only when it was replaced since (another instance
 * wrote it).
 */
public final class ClaimCheckpoint {

  /** The file name in the plugin directory. */
  public static final String FILE_NAME = "deviceplugin4j-claims.json";

  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rw-------");

  /** The format version this code writes and reads. */
  public static final int VERSION = 1;

  private static final JsonFactory JSON = new JsonFactory();

  private final Path file;
  private Object cachedKey;
  private Map<String, PreparedClaim> cached = Map.of();

  /**
   * A checkpoint in a directory.
   *
   * @param dir the plugin directory
   */
  public ClaimCheckpoint(Path dir) {
    this.file = dir.resolve(FILE_NAME);
  }

  /**
   * The checkpoint file.
   *
   * @return its path
   */
  public Path file() {
    return file;
  }

  /**
   * The prepared claims, by UID, in the order they were prepared.
   *
   * @return a copy the caller may change
   * @throws IOException when the file cannot be read, or is corrupt (the message names the file)
   */
  public Map<String, PreparedClaim> read() throws IOException {
    Object key;
    try {
      key = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
    } catch (NoSuchFileException e) {
      cachedKey = null;
      cached = Map.of();
      return new LinkedHashMap<>();
    }
    if (key == null || !key.equals(cachedKey)) {
      cached = parse(Files.readAllBytes(file));
      cachedKey = key;
    }
    return new LinkedHashMap<>(cached);
  }

  /**
   * Replaces the checkpoint atomically.
   *
   * @param claims the prepared claims
   * @throws IOException when it cannot be written; the previous content stays
   */
  public void write(Map<String, PreparedClaim> claims) throws IOException {
    byte[] body = body(claims);
    String header =
        "{\"version\":"
            + VERSION
            + ",\"sha256\":\""
            + HexFormat.of().formatHex(sha256(body))
            + "\"}\n";
    Path temp = file.resolveSibling("." + FILE_NAME + ".tmp");
    // A temporary file left by a crash may have other permissions: start from a new one, created
    // 0600, so the checkpoint is never readable by anyone but its owner, not even for an instant.
    Files.deleteIfExists(temp);
    try (FileChannel ch =
        FileChannel.open(
            temp,
            Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
            PosixFilePermissions.asFileAttribute(OWNER_ONLY))) {
      ByteBuffer buf = ByteBuffer.wrap(concat(header.getBytes(StandardCharsets.UTF_8), body));
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      ch.force(true);
    }
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    syncDirectory(file.getParent());
    cached = new LinkedHashMap<>(claims);
    cachedKey = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
  }

  private static void syncDirectory(Path dir) {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException | UnsupportedOperationException e) {
      // Not every file system lets a directory be synced; the rename is atomic regardless.
    }
  }

  private Map<String, PreparedClaim> parse(byte[] bytes) throws IOException {
    int newline = -1;
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == '\n') {
        newline = i;
        break;
      }
    }
    if (newline < 0) {
      throw corrupt("it has no header line");
    }
    byte[] body = Arrays.copyOfRange(bytes, newline + 1, bytes.length);
    int version = -1;
    String checksum = null;
    try (JsonParser p = JSON.createParser(bytes, 0, newline)) {
      expect(p, JsonToken.START_OBJECT);
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        p.nextToken();
        switch (field) {
          case "version" -> version = p.getIntValue();
          case "sha256" -> checksum = p.getText();
          default -> p.skipChildren();
        }
      }
    } catch (IOException e) {
      throw corrupt("its header is not JSON: " + e.getMessage());
    }
    if (version != VERSION) {
      throw corrupt(
          "it has format version "
              + version
              + ", this plugin reads version "
              + VERSION
              + " (was it written by a newer release?)");
    }
    if (!HexFormat.of().formatHex(sha256(body)).equals(checksum)) {
      throw corrupt("its checksum does not match its content");
    }
    Map<String, PreparedClaim> claims = new LinkedHashMap<>();
    try (JsonParser p = JSON.createParser(body)) {
      expect(p, JsonToken.START_ARRAY);
      while (p.nextToken() == JsonToken.START_OBJECT) {
        PreparedClaim c = readClaim(p);
        claims.put(c.claim().uid(), c);
      }
    } catch (IOException | RuntimeException e) {
      throw corrupt("its claims cannot be read: " + e.getMessage());
    }
    return claims;
  }

  private static PreparedClaim readClaim(JsonParser p) throws IOException {
    String uid = "";
    String namespace = "";
    String name = "";
    List<PreparedDevice> devices = new ArrayList<>();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      p.nextToken();
      switch (field) {
        case "uid" -> uid = p.getText();
        case "namespace" -> namespace = p.getText();
        case "name" -> name = p.getText();
        case "devices" -> {
          while (p.nextToken() == JsonToken.START_OBJECT) {
            devices.add(readDevice(p));
          }
        }
        default -> p.skipChildren();
      }
    }
    return new PreparedClaim(new Claim(namespace, uid, name), devices);
  }

  private static PreparedDevice readDevice(JsonParser p) throws IOException {
    List<String> requests = List.of();
    String pool = "";
    String device = "";
    List<String> cdi = List.of();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      p.nextToken();
      switch (field) {
        case "requests" -> requests = readStrings(p);
        case "pool" -> pool = p.getText();
        case "device" -> device = p.getText();
        case "cdiDeviceIds" -> cdi = readStrings(p);
        default -> p.skipChildren();
      }
    }
    return new PreparedDevice(requests, pool, device, cdi);
  }

  private static List<String> readStrings(JsonParser p) throws IOException {
    List<String> out = new ArrayList<>();
    while (p.nextToken() == JsonToken.VALUE_STRING) {
      out.add(p.getText());
    }
    return out;
  }

  private static void expect(JsonParser p, JsonToken token) throws IOException {
    if (p.nextToken() != token) {
      throw new IOException("expected " + token + " at " + p.currentLocation());
    }
  }

  private static byte[] body(Map<String, PreparedClaim> claims) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartArray();
      for (PreparedClaim c : claims.values()) {
        g.writeStartObject();
        g.writeStringField("uid", c.claim().uid());
        g.writeStringField("namespace", c.claim().namespace());
        g.writeStringField("name", c.claim().name());
        g.writeArrayFieldStart("devices");
        for (PreparedDevice d : c.devices()) {
          g.writeStartObject();
          writeStrings(g, "requests", d.requestNames());
          g.writeStringField("pool", d.poolName());
          g.writeStringField("device", d.deviceName());
          writeStrings(g, "cdiDeviceIds", d.cdiDeviceIds());
          g.writeEndObject();
        }
        g.writeEndArray();
        g.writeEndObject();
      }
      g.writeEndArray();
    }
    return out.toByteArray();
  }

  private static void writeStrings(JsonGenerator g, String field, List<String> values)
      throws IOException {
    g.writeArrayFieldStart(field);
    for (String v : values) {
      g.writeString(v);
    }
    g.writeEndArray();
  }

  private IOException corrupt(String why) {
    return new IOException(
        "the claim checkpoint "
            + file
            + " is unusable: "
            + why
            + ". It records which claims this driver prepared; restore it from a backup or, if"
            + " every pod using this driver's devices on this node is gone, delete it");
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  @Override
  public String toString() {
    return "ClaimCheckpoint[" + Objects.toString(file) + "]";
  }
}
