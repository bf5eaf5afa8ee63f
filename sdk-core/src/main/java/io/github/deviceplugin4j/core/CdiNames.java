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
    String vendor = kind.substring(0, slash);
    String clazz = kind.substring(slash + 1);
    String problem = vendorOrClassProblem("vendor", vendor);
    if (problem == null) {
      problem = vendorOrClassProblem("class", clazz);
    }
    if (problem == null) {
      problem = nameProblem(name);
    }
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
    String problem = vendorOrClassProblem("vendor", vendor);
    if (problem == null) {
      problem = vendorOrClassProblem("class", clazz);
    }
    if (problem == null) {
      problem = nameProblem(name);
    }
    if (problem != null) {
      throw new IllegalArgumentException("invalid CDI device name part: " + problem);
    }
    return vendor + "/" + clazz + "=" + name;
  }

  private static String vendorOrClassProblem(String what, String value) {
    if (value.isEmpty()) {
      return what + " is empty";
    }
    if (!isLetter(value.charAt(0))) {
      return what + " \"" + value + "\" must start with a letter";
    }
    if (!isAlphaNumeric(value.charAt(value.length() - 1))) {
      return what + " \"" + value + "\" must end with a letter or digit";
    }
    for (int i = 1; i < value.length() - 1; i++) {
      char c = value.charAt(i);
      if (!isAlphaNumeric(c) && c != '_' && c != '-' && c != '.') {
        return what + " \"" + value + "\" contains invalid character '" + c + "'";
      }
    }
    return null;
  }

  private static String nameProblem(String value) {
    if (value.isEmpty()) {
      return "device name is empty";
    }
    if (!isAlphaNumeric(value.charAt(0))) {
      return "device name \"" + value + "\" must start with a letter or digit";
    }
    if (!isAlphaNumeric(value.charAt(value.length() - 1))) {
      return "device name \"" + value + "\" must end with a letter or digit";
    }
    for (int i = 1; i < value.length() - 1; i++) {
      char c = value.charAt(i);
      if (!isAlphaNumeric(c) && c != '_' && c != '-' && c != '.' && c != ':') {
        return "device name \"" + value + "\" contains invalid character '" + c + "'";
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
