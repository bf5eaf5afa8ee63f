package io.github.deviceplugin4j.core;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Checks an extended resource name against the kubelet's rules, so a bad name fails when the plugin
 * is built rather than when the kubelet rejects it.
 *
 * <p>The rules (the kubelet's {@code IsExtendedResourceName}): the name contains {@code /}; it is
 * not in the {@code kubernetes.io} domain or a subdomain of it; it does not start with {@code
 * requests.}; {@code requests.<name>} is a qualified name, so the domain is a lowercase DNS-1123
 * subdomain of at most 244 characters (253 with the {@code requests.} prefix) and the name part has
 * 1 to 63 characters of {@code [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?}.
 *
 * <pre>{@code
 * ResourceNames.check("vendor.example.com/fpga");   // fine
 * ResourceNames.isValid("example.com/a/b");         // false: more than one '/'
 * }</pre>
 */
public final class ResourceNames {

  private static final Pattern DNS1123_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern NAME_PART =
      Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
  private static final String REQUESTS_PREFIX = "requests.";
  private static final int MAX_SUBDOMAIN = 253;
  private static final int MAX_NAME_PART = 63;

  private ResourceNames() {}

  /**
   * Whether the kubelet accepts this extended resource name.
   *
   * @param name e.g. {@code vendor.example.com/fpga}
   * @return true when valid
   */
  public static boolean isValid(String name) {
    return problems(name).isEmpty();
  }

  /**
   * Checks a resource name.
   *
   * @param name e.g. {@code vendor.example.com/fpga}
   * @throws ConfigurationException naming every rule the name breaks
   */
  public static void check(String name) {
    List<String> problems = problems(name);
    if (!problems.isEmpty()) {
      throw new ConfigurationException(
          "invalid resource name \""
              + name
              + "\": "
              + String.join("; ", problems)
              + " (expected an extended resource name such as vendor.example.com/fpga)");
    }
  }

  /**
   * Every rule the name breaks.
   *
   * @param name the name to check; null is reported as a problem
   * @return problems, empty when valid
   */
  public static List<String> problems(String name) {
    List<String> problems = new ArrayList<>();
    if (name == null || name.isEmpty()) {
      problems.add("it is empty");
      return problems;
    }
    if (!name.contains("/")) {
      problems.add("it has no domain: it must contain '/'");
      return problems;
    }
    if (name.contains("kubernetes.io/")) {
      problems.add("the kubernetes.io domain and its subdomains are reserved for Kubernetes");
    }
    if (name.startsWith(REQUESTS_PREFIX)) {
      problems.add("it must not start with \"requests.\" (reserved for quota)");
    }
    String[] parts = name.split("/", -1);
    if (parts.length != 2) {
      problems.add("it must contain exactly one '/'");
      return problems;
    }
    String domain = parts[0];
    String part = parts[1];
    if (domain.isEmpty()) {
      problems.add("the domain before '/' is empty");
    } else {
      if (REQUESTS_PREFIX.length() + domain.length() > MAX_SUBDOMAIN) {
        problems.add(
            "the domain is "
                + domain.length()
                + " characters; at most "
                + (MAX_SUBDOMAIN - REQUESTS_PREFIX.length())
                + " are allowed");
      }
      if (!DNS1123_SUBDOMAIN.matcher(domain).matches()) {
        problems.add(
            "the domain \""
                + domain
                + "\" is not a DNS-1123 subdomain (lowercase letters, digits, '-' and '.',"
                + " starting and ending with a letter or digit)");
      }
    }
    if (part.isEmpty()) {
      problems.add("the name after '/' is empty");
    } else {
      if (part.length() > MAX_NAME_PART) {
        problems.add(
            "the name after '/' is "
                + part.length()
                + " characters; at most "
                + MAX_NAME_PART
                + " are allowed");
      }
      if (!NAME_PART.matcher(part).matches()) {
        problems.add(
            "the name \""
                + part
                + "\" must consist of letters, digits, '-', '_' or '.', and start and end with a"
                + " letter or digit");
      }
    }
    return problems;
  }
}
