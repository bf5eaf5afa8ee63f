package io.github.deviceplugin4j.examples.generic;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.github.deviceplugin4j.core.ResourceNames;
import io.github.deviceplugin4j.core.Sharing;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The generic plugin's configuration: resources, each made of device groups. Read from YAML or
 * JSON; every error names its key ({@code resources[0].groups[1].usb[0].vendor}).
 *
 * <pre>{@code
 * domain: generic.example.com      # for resource names without a domain
 * resources:
 *   - name: serial                 # generic.example.com/serial
 *     count: 2                     # each device advertised twice (sharing)
 *     groups:
 *       - paths: ["/dev/ttyUSB*"]  # one device per matching node
 *         env: {SERIAL: "1"}
 *   - name: yubikey
 *     groups:
 *       - usb: [{vendor: "1050", product: "0407"}]
 *   - name: nic
 *     groups:
 *       - pci: [{vendor: "8086", class: "0200"}]
 *         deviceNodes: ["/dev/vfio/vfio"]
 * }</pre>
 *
 * @param resources the resources, in file order, names unique
 */
public record GenericConfig(List<Resource> resources) {

  /** The domain of resource names given without one. */
  public static final String DEFAULT_DOMAIN = "generic.example.com";

  /** The keys of the file's top level. */
  static final Set<String> TOP_KEYS = Set.of("domain", "resources");

  /** The keys of a resource. */
  static final Set<String> RESOURCE_KEYS =
      Set.of("name", "count", "renamed", "oneReplicaPerContainer", "packed", "groups");

  /** The keys of a group. */
  static final Set<String> GROUP_KEYS =
      Set.of("paths", "usb", "pci", "deviceNodes", "permissions", "mounts", "env", "cdi");

  /** The keys of a USB match. */
  static final Set<String> USB_KEYS = Set.of("vendor", "product", "serial");

  /** The keys of a PCI match. */
  static final Set<String> PCI_KEYS = Set.of("vendor", "device", "class");

  /** The keys of a mount. */
  static final Set<String> MOUNT_KEYS = Set.of("hostPath", "containerPath", "readOnly");

  private static final Pattern HEX4 = Pattern.compile("[0-9a-f]{4}");
  private static final Pattern CLASS = Pattern.compile("[0-9a-f]{2}([0-9a-f]{2}([0-9a-f]{2})?)?");
  private static final Pattern PERMISSIONS = Pattern.compile("r?w?m?");

  /** Copies the list. */
  public GenericConfig {
    resources = List.copyOf(resources);
  }

  /**
   * One resource.
   *
   * @param name the full resource name, {@code domain/name}
   * @param sharing how its devices are shared ({@code count}, {@code renamed}, ...)
   * @param groups its device groups
   */
  public record Resource(String name, Sharing sharing, List<Group> groups) {
    /** Copies the list. */
    public Resource {
      groups = List.copyOf(groups);
    }
  }

  /** How a group finds its devices: exactly one of these per group. */
  public enum Kind {
    /** Device-node globs under {@code /dev}. */
    PATHS,
    /** USB devices by vendor, product and serial from sysfs. */
    USB,
    /** PCI devices by vendor, device and class from sysfs. */
    PCI
  }

  /**
   * One device group: how its devices are found and what a container gets with each.
   *
   * @param kind how devices are found
   * @param paths device-node globs ({@link Kind#PATHS})
   * @param usb USB matches ({@link Kind#USB})
   * @param pci PCI matches ({@link Kind#PCI})
   * @param deviceNodes nodes every device of the group also gets, e.g. {@code /dev/vfio/vfio}
   * @param permissions cgroup permissions of the nodes: {@code rw} by default
   * @param mounts mounts every device of the group gets
   * @param env variables every device of the group gets
   * @param cdi fully qualified CDI device names every device of the group gets
   */
  public record Group(
      Kind kind,
      List<String> paths,
      List<Usb> usb,
      List<Pci> pci,
      List<String> deviceNodes,
      String permissions,
      List<Mount> mounts,
      Map<String, String> env,
      List<String> cdi) {
    /** Copies the collections. */
    public Group {
      paths = List.copyOf(paths);
      usb = List.copyOf(usb);
      pci = List.copyOf(pci);
      deviceNodes = List.copyOf(deviceNodes);
      mounts = List.copyOf(mounts);
      env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
      cdi = List.copyOf(cdi);
    }
  }

  /**
   * A USB match: vendor and product IDs (4 hex digits, as in {@code lsusb}), and optionally the
   * serial number.
   *
   * @param vendor {@code idVendor}
   * @param product {@code idProduct}
   * @param serial {@code serial}, empty for any
   */
  public record Usb(String vendor, String product, Optional<String> serial) {}

  /**
   * A PCI match; each part empty for any.
   *
   * @param vendor vendor ID, 4 hex digits
   * @param device device ID, 4 hex digits
   * @param pciClass class code prefix: 2, 4 or 6 hex digits ({@code 02} network, {@code 0200}
   *     Ethernet)
   */
  public record Pci(Optional<String> vendor, Optional<String> device, Optional<String> pciClass) {}

  /**
   * A mount.
   *
   * @param hostPath path on the node
   * @param containerPath path in the container
   * @param readOnly whether read-only (default true)
   */
  public record Mount(String hostPath, String containerPath, boolean readOnly) {}

  /** A configuration that cannot be used; the message names the key and what to do. */
  public static final class ConfigException extends Exception {
    private static final long serialVersionUID = 1L;

    /**
     * A problem.
     *
     * @param message names the key
     */
    public ConfigException(String message) {
      super(message);
    }
  }

  /**
   * Parses a configuration.
   *
   * @param text YAML or JSON
   * @return the configuration
   * @throws ConfigException naming the key that is wrong and what is expected
   */
  public static GenericConfig parse(String text) throws ConfigException {
    JsonNode root;
    try {
      root = new ObjectMapper(new YAMLFactory()).readTree(text);
    } catch (JsonProcessingException e) {
      throw new ConfigException("not valid YAML or JSON: " + e.getOriginalMessage() + location(e));
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      throw new ConfigException("the file is empty; it needs a 'resources' list");
    }
    object(root, "the file", TOP_KEYS);
    String domain = root.has("domain") ? text(root.get("domain"), "domain") : DEFAULT_DOMAIN;
    JsonNode list = root.get("resources");
    if (list == null || !list.isArray() || list.isEmpty()) {
      throw new ConfigException("resources: must be a non-empty list of resources");
    }
    List<Resource> resources = new ArrayList<>();
    Map<String, String> seen = new LinkedHashMap<>();
    for (int i = 0; i < list.size(); i++) {
      String key = "resources[" + i + "]";
      Resource r = resource(list.get(i), key, domain);
      String advertised = r.sharing().resourceName(r.name());
      String before = seen.put(advertised, key);
      if (before != null) {
        throw new ConfigException(
            key
                + ".name: "
                + advertised
                + " is already served by "
                + before
                + "; names must differ");
      }
      resources.add(r);
    }
    return new GenericConfig(resources);
  }

  private static String location(JsonProcessingException e) {
    return e.getLocation() == null
        ? ""
        : " (line "
            + e.getLocation().getLineNr()
            + ", column "
            + e.getLocation().getColumnNr()
            + ")";
  }

  private static Resource resource(JsonNode node, String key, String domain)
      throws ConfigException {
    object(node, key, RESOURCE_KEYS);
    String name = text(required(node, key, "name"), key + ".name");
    String full = name.contains("/") ? name : domain + "/" + name;
    List<String> nameProblems = ResourceNames.problems(full);
    if (!nameProblems.isEmpty()) {
      throw new ConfigException(key + ".name: " + String.join("; ", nameProblems));
    }
    int count = 1;
    if (node.has("count")) {
      JsonNode c = node.get("count");
      if (!c.isInt() || c.asInt() < 1 || c.asInt() > Sharing.MAX_REPLICAS) {
        throw new ConfigException(
            key
                + ".count: must be a whole number from 1 to "
                + Sharing.MAX_REPLICAS
                + ", was "
                + c);
      }
      count = c.asInt();
    }
    Sharing sharing = count == 1 ? Sharing.none() : Sharing.replicas(count);
    if (flag(node, key, "renamed")) {
      sharing = sharing.renamed();
    }
    if (flag(node, key, "oneReplicaPerContainer")) {
      sharing = sharing.oneReplicaPerContainer();
    }
    if (flag(node, key, "packed")) {
      sharing = sharing.packed();
    }
    List<Group> parsed =
        items(required(node, key, "groups"), key + ".groups", GenericConfig::group);
    return new Resource(full, sharing, parsed);
  }

  private static Group group(JsonNode node, String key) throws ConfigException {
    object(node, key, GROUP_KEYS);
    List<String> kinds = new ArrayList<>();
    for (String k : List.of("paths", "usb", "pci")) {
      if (node.has(k)) {
        kinds.add(k);
      }
    }
    if (kinds.size() != 1) {
      throw new ConfigException(
          key
              + ": needs exactly one of 'paths', 'usb' or 'pci'"
              + (kinds.isEmpty() ? "" : ", has " + String.join(" and ", kinds))
              + "; put each in its own group");
    }
    List<String> paths = List.of();
    List<Usb> usb = List.of();
    List<Pci> pci = List.of();
    Kind kind;
    switch (kinds.get(0)) {
      case "paths" -> {
        kind = Kind.PATHS;
        paths = absolutePaths(node.get("paths"), key + ".paths", true);
        for (int i = 0; i < paths.size(); i++) {
          if (!paths.get(i).startsWith("/dev/")) {
            throw new ConfigException(
                key
                    + ".paths["
                    + i
                    + "]: must be a device node glob under /dev/, was "
                    + paths.get(i));
          }
        }
      }
      case "usb" -> {
        kind = Kind.USB;
        usb =
            items(
                node.get("usb"),
                key + ".usb",
                (m, k) -> {
                  object(m, k, USB_KEYS);
                  return new Usb(
                      hex4(required(m, k, "vendor"), k + ".vendor"),
                      hex4(required(m, k, "product"), k + ".product"),
                      m.has("serial")
                          ? Optional.of(text(m.get("serial"), k + ".serial"))
                          : Optional.empty());
                });
      }
      default -> {
        kind = Kind.PCI;
        pci = items(node.get("pci"), key + ".pci", GenericConfig::pci);
      }
    }
    List<String> deviceNodes =
        node.has("deviceNodes")
            ? absolutePaths(node.get("deviceNodes"), key + ".deviceNodes", false)
            : List.of();
    String permissions = "rw";
    if (node.has("permissions")) {
      permissions = text(node.get("permissions"), key + ".permissions");
      if (!PERMISSIONS.matcher(permissions).matches()) {
        throw new ConfigException(
            key
                + ".permissions: must be a combination of r, w, m in that order, was "
                + permissions);
      }
    }
    List<Mount> mounts = List.of();
    if (node.has("mounts")) {
      mounts =
          items(
              node.get("mounts"),
              key + ".mounts",
              (m, k) -> {
                object(m, k, MOUNT_KEYS);
                return new Mount(
                    absolute(required(m, k, "hostPath"), k + ".hostPath"),
                    absolute(required(m, k, "containerPath"), k + ".containerPath"),
                    !m.has("readOnly") || flag(m, k, "readOnly"));
              });
    }
    Map<String, String> env = new LinkedHashMap<>();
    if (node.has("env")) {
      JsonNode e = node.get("env");
      if (!e.isObject()) {
        throw new ConfigException(key + ".env: must be a map of variable names to values");
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = e.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> v = it.next();
        if (!v.getValue().isValueNode() || v.getValue().isNull()) {
          throw new ConfigException(key + ".env." + v.getKey() + ": must be a string");
        }
        env.put(v.getKey(), v.getValue().asText());
      }
    }
    List<String> cdi = List.of();
    if (node.has("cdi")) {
      cdi =
          items(
              node.get("cdi"),
              key + ".cdi",
              (n, k) -> {
                String name = text(n, k);
                if (!name.matches("[a-z0-9.-]+/[a-zA-Z0-9._-]+=[a-zA-Z0-9._:-]+")) {
                  throw new ConfigException(
                      k
                          + ": must be a fully qualified CDI name vendor.com/class=device, was "
                          + name);
                }
                return name;
              });
    }
    return new Group(kind, paths, usb, pci, deviceNodes, permissions, mounts, env, cdi);
  }

  private static Pci pci(JsonNode m, String k) throws ConfigException {
    object(m, k, PCI_KEYS);
    if (m.isEmpty()) {
      throw new ConfigException(k + ": needs at least one of 'vendor', 'device', 'class'");
    }
    Optional<String> pciClass = Optional.empty();
    if (m.has("class")) {
      String c = strip0x(text(m.get("class"), k + ".class"));
      if (!CLASS.matcher(c).matches()) {
        throw new ConfigException(
            k + ".class: must be 2, 4 or 6 hex digits (02, 0200, 020000), was " + m.get("class"));
      }
      pciClass = Optional.of(c);
    }
    return new Pci(
        m.has("vendor") ? Optional.of(hex4(m.get("vendor"), k + ".vendor")) : Optional.empty(),
        m.has("device") ? Optional.of(hex4(m.get("device"), k + ".device")) : Optional.empty(),
        pciClass);
  }

  private static void object(JsonNode node, String key, Set<String> known) throws ConfigException {
    if (node == null || !node.isObject()) {
      throw new ConfigException(key + ": must be a map with the keys " + sorted(known));
    }
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!known.contains(k)) {
        throw new ConfigException(
            (key.equals("the file") ? "" : key + ".")
                + k
                + ": unknown key; known keys: "
                + sorted(known));
      }
    }
  }

  private static String sorted(Set<String> keys) {
    return String.join(", ", new java.util.TreeSet<>(keys));
  }

  private static JsonNode required(JsonNode node, String key, String field) throws ConfigException {
    JsonNode v = node.get(field);
    if (v == null || v.isNull()) {
      throw new ConfigException(key + "." + field + ": missing");
    }
    return v;
  }

  private static String text(JsonNode node, String key) throws ConfigException {
    if (node == null || !node.isTextual() || node.asText().isBlank()) {
      throw new ConfigException(key + ": must be a non-empty string, was " + node);
    }
    return node.asText().trim();
  }

  private static boolean flag(JsonNode node, String key, String field) throws ConfigException {
    JsonNode v = node.get(field);
    if (v == null) {
      return false;
    }
    if (!v.isBoolean()) {
      throw new ConfigException(key + "." + field + ": must be true or false, was " + v);
    }
    return v.asBoolean();
  }

  private static JsonNode nonEmptyList(JsonNode node, String key) throws ConfigException {
    if (node == null || !node.isArray() || node.isEmpty()) {
      throw new ConfigException(key + ": must be a non-empty list");
    }
    return node;
  }

  private static String hex4(JsonNode node, String key) throws ConfigException {
    if (node != null && node.isNumber()) {
      throw new ConfigException(
          key + ": quote it (\"" + node.asText() + "\"): an unquoted ID loses leading zeros");
    }
    String v = strip0x(text(node, key));
    if (!HEX4.matcher(v).matches()) {
      throw new ConfigException(key + ": must be 4 hex digits as lsusb or lspci show it, was " + v);
    }
    return v;
  }

  private static String strip0x(String v) {
    String lower = v.toLowerCase(java.util.Locale.ROOT);
    return lower.startsWith("0x") ? lower.substring(2) : lower;
  }

  private static String absolute(JsonNode node, String key) throws ConfigException {
    String p = text(node, key);
    if (!p.startsWith("/")) {
      throw new ConfigException(key + ": must be an absolute path, was " + p);
    }
    return p;
  }

  private static List<String> absolutePaths(JsonNode node, String key, boolean globs)
      throws ConfigException {
    return items(
        node,
        key,
        (n, k) -> {
          String p = absolute(n, k);
          if (!globs && p.matches(".*[*?\\[{].*")) {
            throw new ConfigException(k + ": must be a plain path, not a glob, was " + p);
          }
          return p;
        });
  }

  /** Reads one element of a list; {@code key} names it, e.g. {@code resources[0].groups[1]}. */
  private interface Item<T> {
    T read(JsonNode node, String key) throws ConfigException;
  }

  /** Every element of a non-empty list, each read with its own key. */
  private static <T> List<T> items(JsonNode node, String key, Item<T> item) throws ConfigException {
    JsonNode list = nonEmptyList(node, key);
    List<T> out = new ArrayList<>(list.size());
    for (int i = 0; i < list.size(); i++) {
      out.add(item.read(list.get(i), key + "[" + i + "]"));
    }
    return out;
  }
}
