package io.github.deviceplugin4j.core.internal.state;

import io.github.deviceplugin4j.core.CdiNames;
import io.github.deviceplugin4j.core.ContainerAllocation;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.DeviceUnavailableException;
import io.github.deviceplugin4j.core.InvalidRequestException;
import io.github.deviceplugin4j.core.Mount;
import io.github.deviceplugin4j.core.Sharing;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;

/** Checks of what the backend publishes and returns, and of what the kubelet asks. */
public final class Validation {

  /** The kubelet's limit on a device ID. */
  public static final int MAX_DEVICE_ID = 63;

  /** The most IDs {@link #quote} lists in a message. */
  public static final int MAX_QUOTED_IDS = 20;

  /** The longest ID {@link #quote} shows whole in a message. */
  public static final int MAX_QUOTED_ID_CHARS = 100;

  private Validation() {}

  /**
   * The devices of a snapshot that may be published, in the backend's order, and what was wrong
   * with the others: one message per dropped device, naming it.
   */
  public record DeviceCheck(List<Device> accepted, List<String> problems) {}

  /** Checks every device of a snapshot; bad devices are dropped, the first of repeated IDs kept. */
  public static DeviceCheck checkDevices(List<Device> devices) {
    List<Device> accepted = new ArrayList<>(devices.size());
    List<String> problems = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < devices.size(); i++) {
      Device d = devices.get(i);
      if (d == null) {
        problems.add("device #" + i + " is null; dropped");
        continue;
      }
      String idProblem = deviceIdProblem(d.id());
      if (idProblem != null) {
        problems.add(idProblem + "; device dropped");
        continue;
      }
      if (!seen.add(d.id())) {
        problems.add("device ID \"" + d.id() + "\" is repeated; only the first is kept");
        continue;
      }
      List<String> allocationProblems = allocationProblems(d.allocation());
      if (!allocationProblems.isEmpty()) {
        problems.add("device \"" + d.id() + "\" dropped: " + String.join(", ", allocationProblems));
        continue;
      }
      String reasonProblem = reasonProblem(d.unhealthyReason());
      if (reasonProblem != null) {
        problems.add(
            "device \""
                + d.id()
                + "\" kept, but its unhealthy reason "
                + reasonProblem
                + ": keep it under "
                + Device.MAX_REASON
                + " printable characters");
        d = d.withHealth(d.health(), cleanReason(d.unhealthyReason()));
      }
      accepted.add(d);
    }
    return new DeviceCheck(accepted, problems);
  }

  /** What is wrong with an unhealthy reason; null when fine. */
  static String reasonProblem(String reason) {
    if (reason.isEmpty()) {
      return null;
    }
    if (reason.length() > Device.MAX_REASON) {
      return "is " + reason.length() + " characters; shortened";
    }
    return hasControl(reason) ? "contains a control character; replaced by a space" : null;
  }

  /**
   * An unhealthy reason made acceptable: control characters replaced by spaces, cut to {@link
   * Device#MAX_REASON} characters (ending with "...").
   */
  static String cleanReason(String reason) {
    String clean = replaceControls(reason, ' ');
    return clean.length() <= Device.MAX_REASON
        ? clean
        : clean.substring(0, Device.MAX_REASON - 3) + "...";
  }

  /**
   * Drops the validated devices whose replica IDs would be longer than the kubelet allows, with one
   * problem per device dropped, naming it and what to do.
   */
  public static DeviceCheck checkReplicaIds(List<Device> devices, Sharing sharing) {
    if (!sharing.isShared()) {
      return new DeviceCheck(devices, List.of());
    }
    String last = Sharing.replicaId("", sharing.replicas() - 1);
    int longest = MAX_DEVICE_ID - last.length();
    List<Device> kept = new ArrayList<>(devices.size());
    List<String> problems = new ArrayList<>();
    for (Device d : devices) {
      if (d.id().length() > longest) {
        problems.add(
            "device \""
                + d.id()
                + "\" dropped: shared "
                + sharing.replicas()
                + " times, its last replica ID \""
                + Sharing.replicaId(d.id(), sharing.replicas() - 1)
                + "\" is over the kubelet's "
                + MAX_DEVICE_ID
                + " characters; keep device IDs under "
                + (longest + 1)
                + " characters or share fewer times");
      } else {
        kept.add(d);
      }
    }
    return new DeviceCheck(problems.isEmpty() ? devices : kept, problems);
  }

  /** Why a device ID is not acceptable; null when fine. */
  public static String deviceIdProblem(String id) {
    if (id.isEmpty()) {
      return "device ID is empty";
    }
    if (id.length() > MAX_DEVICE_ID) {
      return "device ID \""
          + id
          + "\" is "
          + id.length()
          + " characters; the kubelet allows at most "
          + MAX_DEVICE_ID;
    }
    return hasControl(id)
        ? "device ID \"" + replaceControls(id, '?') + "\" contains a control character"
        : null;
  }

  // Control characters are Character.isISOControl's (ASCII's and Latin-1's, U+0080-U+009F) for the
  // check and the replacement alike. A loop, not a stream or a regex: PreStartContainer checks
  // every device ID it is given.
  private static boolean hasControl(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (Character.isISOControl(s.charAt(i))) {
        return true;
      }
    }
    return false;
  }

  private static String replaceControls(String s, char with) {
    char[] chars = s.toCharArray();
    for (int i = 0; i < chars.length; i++) {
      if (Character.isISOControl(chars[i])) {
        chars[i] = with;
      }
    }
    return new String(chars);
  }

  /**
   * Everything wrong with an allocation a backend returned or attached to a device, naming the
   * offending values; empty when fine.
   */
  public static List<String> allocationProblems(ContainerAllocation allocation) {
    // Runs for every device of every published list and for every Allocate answer: no
    // allocation at all unless something is wrong.
    List<String> problems = null;
    for (Map.Entry<String, String> e : allocation.env().entrySet()) {
      if (!isEnvName(e.getKey())) {
        problems =
            add(
                problems,
                "environment variable name \""
                    + e.getKey()
                    + "\" is invalid (expected [A-Za-z_][A-Za-z0-9_]*)");
      }
      if (e.getValue().indexOf('\0') >= 0) {
        problems =
            add(problems, "environment variable " + e.getKey() + " contains a NUL character");
      }
    }
    for (Mount m : allocation.mounts()) {
      problems = addPathProblem(problems, "mount container path", m.containerPath());
      problems = addPathProblem(problems, "mount host path", m.hostPath());
    }
    for (DeviceNode n : allocation.deviceNodes()) {
      problems = addPathProblem(problems, "device node container path", n.containerPath());
      problems = addPathProblem(problems, "device node host path", n.hostPath());
      String p = permissionsProblem(n.permissions());
      if (p != null) {
        problems = add(problems, "device node " + n.hostPath() + ": " + p);
      }
    }
    for (String key : allocation.annotations().keySet()) {
      if (key.isEmpty()) {
        problems = add(problems, "annotation key is empty");
      }
    }
    for (String cdi : allocation.cdiDevices()) {
      String p = CdiNames.problem(cdi);
      if (p != null) {
        problems = add(problems, p);
      }
    }
    return problems == null ? List.of() : problems;
  }

  private static List<String> add(List<String> problems, String problem) {
    List<String> list = problems == null ? new ArrayList<>() : problems;
    list.add(problem);
    return list;
  }

  /** Whether a name matches {@code [A-Za-z_][A-Za-z0-9_]*}. */
  private static boolean isEnvName(String name) {
    if (name.isEmpty()) {
      return false;
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
      if (!letter && !(i > 0 && c >= '0' && c <= '9')) {
        return false;
      }
    }
    return true;
  }

  private static List<String> addPathProblem(List<String> problems, String what, String path) {
    String p = pathProblem(path);
    return p == null ? problems : add(problems, what + " \"" + path + "\" " + p);
  }

  /** Why a path is not an acceptable absolute path; null when fine. */
  public static String pathProblem(String path) {
    if (path.isEmpty()) {
      return "is empty";
    }
    if (path.charAt(0) != '/') {
      return "is not absolute";
    }
    if (path.indexOf('\0') >= 0) {
      return "contains a NUL character";
    }
    // A ".." segment: two dots between slashes (or a slash and the end).
    for (int i = path.indexOf(".."); i >= 0; i = path.indexOf("..", i + 1)) {
      boolean startsSegment = path.charAt(i - 1) == '/';
      boolean endsSegment = i + 2 == path.length() || path.charAt(i + 2) == '/';
      if (startsSegment && endsSegment) {
        return "contains a '..' segment";
      }
    }
    return null;
  }

  /** Why cgroup device permissions (e.g. {@code "rw"}) are not acceptable; null when fine. */
  public static String permissionsProblem(String permissions) {
    if (permissions.isEmpty()) {
      return "permissions are empty (expected a combination of r, w and m)";
    }
    int seen = 0; // one bit per letter
    for (int i = 0; i < permissions.length(); i++) {
      char c = permissions.charAt(i);
      if (c != 'r' && c != 'w' && c != 'm') {
        return "permissions \""
            + permissions
            + "\" contain '"
            + c
            + "' (only r, w and m are allowed)";
      }
      int bit = c == 'r' ? 1 : c == 'w' ? 2 : 4;
      if ((seen & bit) != 0) {
        return "permissions \"" + permissions + "\" repeat '" + c + "'";
      }
      seen |= bit;
    }
    return null;
  }

  /**
   * The common case of {@link #resolve} without building anything for errors: every ID known, not
   * repeated, and healthy when required. The devices in request order, or null when something is
   * wrong (resolve then names it).
   */
  private static List<Device> resolveValid(
      List<String> ids, Snapshot snapshot, boolean requireHealthy) {
    Map<String, Device> byId = snapshot.byId();
    if (ids.size() == 1) {
      Device d = byId.get(ids.get(0));
      return d != null && (d.isHealthy() || !requireHealthy) ? List.of(d) : null;
    }
    Set<String> seen = new HashSet<>(ids.size() * 2);
    List<Device> devices = new ArrayList<>(ids.size());
    for (String id : ids) {
      Device d = byId.get(id);
      if (d == null || !seen.add(id) || (requireHealthy && !d.isHealthy())) {
        return null;
      }
      devices.add(d);
    }
    return devices;
  }

  /**
   * Resolves the device IDs the kubelet sent against a snapshot, to the devices in request order.
   * Fails with an {@link InvalidRequestException} for no IDs, empty, repeated or unknown IDs, and
   * with a {@link DeviceUnavailableException} for unhealthy devices when {@code requireHealthy}.
   * {@code what} names the request part in messages, e.g. {@code "container request 0"}.
   */
  public static List<Device> resolve(
      String what, String resource, List<String> ids, Snapshot snapshot, boolean requireHealthy) {
    if (ids.isEmpty()) {
      throw new InvalidRequestException(what + " for " + resource + " names no devices", List.of());
    }
    List<Device> valid = resolveValid(ids, snapshot, requireHealthy);
    if (valid != null) {
      return valid;
    }
    Set<String> seen = new HashSet<>();
    Set<String> repeated = new LinkedHashSet<>();
    Set<String> unknown = new LinkedHashSet<>();
    Set<String> unhealthy = new LinkedHashSet<>();
    List<Device> devices = new ArrayList<>(ids.size());
    for (String id : ids) {
      if (!seen.add(id)) {
        repeated.add(id);
        continue;
      }
      Device d = snapshot.byId().get(id);
      if (d == null) {
        unknown.add(id);
      } else {
        if (!d.isHealthy()) {
          unhealthy.add(id);
        }
        devices.add(d);
      }
    }
    if (!unknown.isEmpty()) {
      throw new InvalidRequestException(
          what
              + " for "
              + resource
              + " names unknown device IDs "
              + quote(unknown)
              + " (the plugin advertises "
              + snapshot.devices().size()
              + " devices)",
          List.copyOf(unknown));
    }
    if (!repeated.isEmpty()) {
      throw new InvalidRequestException(
          what + " for " + resource + " repeats device IDs " + quote(repeated),
          List.copyOf(repeated));
    }
    if (requireHealthy && !unhealthy.isEmpty()) {
      throw new DeviceUnavailableException(
          what + " for " + resource + " names unhealthy devices " + quote(unhealthy),
          List.copyOf(unhealthy));
    }
    return devices;
  }

  /**
   * Formats IDs for a message: {@code ["a", "b"]}. Bounded whatever the input: at most {@value
   * #MAX_QUOTED_IDS} IDs are listed (then {@code ... and N more}), and an ID longer than {@value
   * #MAX_QUOTED_ID_CHARS} characters is cut, so that a request with 10,000 IDs or a huge ID gets a
   * readable error that fits in a gRPC status.
   */
  public static String quote(Iterable<String> ids) {
    StringJoiner quoted = new StringJoiner(", ", "[", "]");
    int n = 0;
    for (String id : ids) {
      if (n++ < MAX_QUOTED_IDS) {
        quoted.add(
            id.length() > MAX_QUOTED_ID_CHARS
                ? "\"" + id.substring(0, MAX_QUOTED_ID_CHARS) + "...(" + id.length() + " chars)\""
                : "\"" + id + "\"");
      }
    }
    if (n > MAX_QUOTED_IDS) {
      quoted.add("... and " + (n - MAX_QUOTED_IDS) + " more");
    }
    return quoted.toString();
  }
}
