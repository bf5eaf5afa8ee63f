package io.github.deviceplugin4j.testkit.internal;

import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** The kubelet's rules for extended resource names and its error texts. */
public final class ResourceNames {
  private static final String REQUESTS_PREFIX = "requests.";
  private static final String NATIVE_PREFIX = "kubernetes.io/";
  private static final Pattern DNS1123_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern QUALIFIED_NAME =
      Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");

  private ResourceNames() {}

  /**
   * Whether the kubelet accepts the name as an extended resource name: it contains a '/', is not in
   * the {@code kubernetes.io/} domain, does not start with {@code requests.}, and {@code
   * "requests." + name} is a qualified name (a DNS-1123 subdomain prefix of at most 253 characters,
   * a name part of at most 63 characters).
   *
   * @param name the name
   * @return true when valid
   */
  public static boolean isExtendedResourceName(String name) {
    if (!name.contains("/") || name.contains(NATIVE_PREFIX) || name.startsWith(REQUESTS_PREFIX)) {
      return false;
    }
    return isQualifiedName(REQUESTS_PREFIX + name);
  }

  /**
   * Whether the value is a DNS-1123 subdomain (lower-case alphanumerics, '-' and '.', at most 253
   * characters), as a DRA driver name must be.
   *
   * @param value the value
   * @return true when valid
   */
  public static boolean isDnsSubdomain(String value) {
    return !value.isEmpty() && value.length() <= 253 && DNS1123_SUBDOMAIN.matcher(value).matches();
  }

  private static boolean isQualifiedName(String value) {
    String[] parts = value.split("/", -1);
    String name;
    if (parts.length == 1) {
      name = parts[0];
    } else if (parts.length == 2) {
      String prefix = parts[0];
      if (prefix.isEmpty()
          || prefix.length() > 253
          || !DNS1123_SUBDOMAIN.matcher(prefix).matches()) {
        return false;
      }
      name = parts[1];
    } else {
      return false;
    }
    return !name.isEmpty() && name.length() <= 63 && QUALIFIED_NAME.matcher(name).matches();
  }

  /**
   * The kubelet's text for a rejected resource name.
   *
   * @param name the name
   * @return {@code the ResourceName "X" is invalid}
   */
  public static String invalidNameError(String name) {
    return "the ResourceName " + goQuote(name) + " is invalid";
  }

  /**
   * The kubelet's text for an unsupported version.
   *
   * @param version the requested version
   * @param supported the kubelet's versions
   * @return {@code requested API version "X" is not supported by kubelet. Supported version is
   *     ["v1beta1"]}
   */
  public static String unsupportedVersionError(String version, List<String> supported) {
    return "requested API version "
        + goQuote(version)
        + " is not supported by kubelet. Supported version is "
        + goQuoteList(supported);
  }

  /**
   * Go's {@code %q} of a string slice: {@code ["a" "b"]}.
   *
   * @param values the strings
   * @return the text
   */
  public static String goQuoteList(List<String> values) {
    return values.stream().map(ResourceNames::goQuote).collect(Collectors.joining(" ", "[", "]"));
  }

  /**
   * Go's {@code %v} of a string slice: {@code [a b]}.
   *
   * @param values the strings
   * @return the text
   */
  public static String goList(List<String> values) {
    return String.join(" ", values).transform(s -> "[" + s + "]");
  }

  /**
   * Go's {@code %q} of a string (escaping quotes, backslashes and control characters).
   *
   * @param s the string
   * @return the quoted text
   */
  public static String goQuote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\t' -> b.append("\\t");
        case '\r' -> b.append("\\r");
        default -> {
          if (c < 0x20 || c == 0x7f) {
            b.append(String.format("\\x%02x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }
}
