package io.github.deviceplugin4j.testkit.internal;

import io.github.deviceplugin4j.testkit.DeviceSpec;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.MountSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/** Well-formedness checks on what a plugin sends: device lists and allocation responses. */
public final class ResponseChecks {
  private static final Pattern ENV_NAME = Pattern.compile("[-._a-zA-Z][-._a-zA-Z0-9]*");
  private static final Pattern CDI_VENDOR =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?");
  private static final Pattern CDI_CLASS =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?");
  private static final Pattern CDI_DEVICE =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?");

  private ResponseChecks() {}

  /**
   * Problems in the parts of an allocation response that a container runtime uses. It takes the
   * parts, not the testkit's {@code Allocation}, so that the record may call it and nothing here
   * depends back on the record.
   *
   * @param envs the environment variables
   * @param mounts the mounts
   * @param devices the device nodes
   * @param cdiDevices the CDI device names
   * @return one line per problem
   */
  public static List<String> allocationProblems(
      Map<String, String> envs,
      List<MountSpec> mounts,
      List<DeviceSpec> devices,
      List<String> cdiDevices) {
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, String> e : envs.entrySet()) {
      if (!ENV_NAME.matcher(e.getKey()).matches()) {
        problems.add(
            "env name "
                + ResourceNames.goQuote(e.getKey())
                + " is not a valid variable name ([-._a-zA-Z][-._a-zA-Z0-9]*)");
      }
    }
    for (MountSpec m : mounts) {
      checkAbsolute(problems, "mount container_path", m.containerPath());
      checkAbsolute(problems, "mount host_path", m.hostPath());
    }
    for (DeviceSpec d : devices) {
      checkAbsolute(problems, "device container_path", d.containerPath());
      checkAbsolute(problems, "device host_path", d.hostPath());
      if (!validPermissions(d.permissions())) {
        problems.add(
            "device "
                + d.hostPath()
                + " has permissions "
                + ResourceNames.goQuote(d.permissions())
                + "; expected a non-empty combination of r, w, m");
      }
    }
    for (String cdi : cdiDevices) {
      if (!isCdiName(cdi)) {
        problems.add(
            "CDI device "
                + ResourceNames.goQuote(cdi)
                + " is not a fully qualified CDI name (vendor.com/class=name)");
      }
    }
    return problems;
  }

  private static void checkAbsolute(List<String> problems, String what, String path) {
    if (path.isEmpty() || !path.startsWith("/")) {
      problems.add(what + " " + ResourceNames.goQuote(path) + " is not an absolute path");
    }
  }

  /**
   * Whether cgroup device permissions are a non-empty combination of r, w, m without repeats.
   *
   * @param p the permissions
   * @return true when valid
   */
  public static boolean validPermissions(String p) {
    if (p.isEmpty() || p.length() > 3) {
      return false;
    }
    Set<Character> seen = new HashSet<>();
    for (char c : p.toCharArray()) {
      if ((c != 'r' && c != 'w' && c != 'm') || !seen.add(c)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Whether the name is a fully qualified CDI device name, {@code vendor/class=name}.
   *
   * @param name the name
   * @return true when valid
   */
  public static boolean isCdiName(String name) {
    int slash = name.indexOf('/');
    int eq = name.indexOf('=');
    if (slash <= 0 || eq <= slash + 1 || eq == name.length() - 1) {
      return false;
    }
    String vendor = name.substring(0, slash);
    String clazz = name.substring(slash + 1, eq);
    String device = name.substring(eq + 1);
    return CDI_VENDOR.matcher(vendor).matches()
        && CDI_CLASS.matcher(clazz).matches()
        && CDI_DEVICE.matcher(device).matches();
  }

  /**
   * Problems in a device list: empty or duplicate IDs, health values other than {@code Healthy} and
   * {@code Unhealthy}.
   *
   * @param devices the list as sent
   * @return one line per problem
   */
  public static List<String> deviceListProblems(List<DeviceState> devices) {
    List<String> problems = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (DeviceState d : devices) {
      if (d.id().isEmpty()) {
        problems.add("a device has an empty ID");
      } else if (!seen.add(d.id())) {
        problems.add("device ID " + ResourceNames.goQuote(d.id()) + " appears more than once");
      }
      if (!DeviceState.HEALTHY.equals(d.health()) && !DeviceState.UNHEALTHY.equals(d.health())) {
        problems.add(
            "device "
                + ResourceNames.goQuote(d.id())
                + " has health "
                + ResourceNames.goQuote(d.health())
                + "; the kubelet knows only \"Healthy\" and \"Unhealthy\"");
      }
    }
    return problems;
  }
}
