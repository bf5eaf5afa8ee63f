package io.github.deviceplugin4j.core;

import java.util.Objects;

/**
 * Fully qualified CDI device names: {@code vendor/class=name}, e.g. {@code
 * vendor.example.com/fpga=port0}, with the rules of the Container Device Interface parser.
 *
 * <ul>
 *   <li>vendor and class: start with a letter, end with a letter or digit, and contain only
 *       letters, digits, {@code _}, {@code -} and {@code .};
 *   <li>name: starts and ends with a letter or digit and contains only letters, digits, {@code _},
 *       {@code -}, {@code .} and {@code :}.
 * </ul>
 *
 * <pre>{@code
 * String cdi = CdiNames.qualified("vendor.example.com", "fpga", "port0");
 * // "vendor.example.com/fpga=port0"
 * CdiNames.isValid("vendor.example.com/fpga");  // false: no device name
 * }</pre>
 */
public final class CdiNames {

  private CdiNames() {}

  /**
   * Whether a name is a valid fully qualified CDI device name.
   *
   * @param qualifiedName e.g. {@code vendor.example.com/fpga=port0}
   * @return true when valid
   */
  public static boolean isValid(String qualifiedName) {
    return problem(qualifiedName) == null;
  }

  /**
   * Why a name is not a valid fully qualified CDI device name.
   *
   * @param qualifiedName the name to check
   * @return a description of the problem, or null when the name is valid
   */
  public static String problem(String qualifiedName) {
    if (qualifiedName == null || qualifiedName.isEmpty()) {
      return "CDI device name is empty";
    }
    int eq = qualifiedName.indexOf('=');
    if (eq < 0) {
      return "CDI device name \"" + qualifiedName + "\" has no '=': expected vendor/class=name";
    }
    String kind = qualifiedName.substring(0, eq);
    String name = qualifiedName.substring(eq + 1);
    int slash = kind.indexOf('/');
    if (slash < 0) {
      return "CDI device name \"" + qualifiedName + "\" has no '/': expected vendor/class=name";
    }
    String problem = partsProblem(kind.substring(0, slash), kind.substring(slash + 1), name);
    return problem == null ? null : "CDI device name \"" + qualifiedName + "\": " + problem;
  }

  /**
   * Builds a fully qualified CDI device name and checks it.
   *
   * @param vendor e.g. {@code vendor.example.com}
   * @param clazz e.g. {@code fpga}
   * @param name e.g. {@code port0}
   * @return {@code vendor/class=name}
   * @throws IllegalArgumentException when a part is invalid, naming it
   */
  public static String qualified(String vendor, String clazz, String name) {
    Objects.requireNonNull(vendor, "vendor");
    Objects.requireNonNull(clazz, "clazz");
    Objects.requireNonNull(name, "name");
    String problem = partsProblem(vendor, clazz, name);
    if (problem != null) {
      throw new IllegalArgumentException("invalid CDI device name part: " + problem);
    }
    return vendor + "/" + clazz + "=" + name;
  }

  private static String partsProblem(String vendor, String clazz, String name) {
    String problem = partProblem("vendor", vendor, false);
    if (problem == null) {
      problem = partProblem("class", clazz, false);
    }
    return problem == null ? partProblem("device name", name, true) : problem;
  }

  /** A device name may start with a digit and contain ':'; a vendor or class may not. */
  private static String partProblem(String what, String value, boolean name) {
    if (value.isEmpty()) {
      return what + " is empty";
    }
    char first = value.charAt(0);
    if (!(name ? isAlphaNumeric(first) : isLetter(first))) {
      return what + " \"" + value + "\" must start with a letter" + (name ? " or digit" : "");
    }
    if (!isAlphaNumeric(value.charAt(value.length() - 1))) {
      return what + " \"" + value + "\" must end with a letter or digit";
    }
    for (int i = 1; i < value.length() - 1; i++) {
      char c = value.charAt(i);
      if (!isAlphaNumeric(c) && c != '_' && c != '-' && c != '.' && !(name && c == ':')) {
        return what + " \"" + value + "\" contains invalid character '" + c + "'";
      }
    }
    return null;
  }

  private static boolean isLetter(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
  }

  private static boolean isAlphaNumeric(char c) {
    return isLetter(c) || (c >= '0' && c <= '9');
  }
}
