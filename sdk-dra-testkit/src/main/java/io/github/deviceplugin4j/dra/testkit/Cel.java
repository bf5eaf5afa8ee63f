package io.github.deviceplugin4j.dra.testkit;

import io.fabric8.kubernetes.api.model.Quantity;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The part of CEL that DRA selectors use most, evaluated against one device the way upstream's
 * {@code k8s.io/dynamic-resource-allocation/cel} exposes it: {@code device.driver}, {@code
 * device.attributes["domain"].name}, {@code device.capacity["domain"].name} (a quantity), {@code
 * device.allowMultipleAllocations}.
 *
 * <p>Supported: string, integer and boolean literals; {@code == != < <= > >=}; {@code && || !};
 * parentheses; {@code "key" in map}; {@code quantity("1Gi")} with {@code .compareTo(q)}, {@code
 * .isGreaterThan(q)}, {@code .isLessThan(q)}; strings' {@code .startsWith(s)}, {@code
 * .endsWith(s)}, {@code .contains(s)}. A missing map key is a runtime error ("no such key"), as in
 * CEL. Not supported (a parse error names it): {@code semver(...)}, macros ({@code exists}, {@code
 * all}, ...), lists, arithmetic, the ternary operator.
 */
final class Cel {
  private final String source;
  private final List<String> tokens;
  private int pos;

  /** A parse or evaluation error, with the expression. */
  static final class CelException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CelException(String message) {
      super(message);
    }
  }

  private Cel(String source) {
    this.source = source;
    this.tokens = tokenize(source);
  }

  /**
   * Evaluates a selector against a device.
   *
   * @param expression the CEL expression
   * @param device the {@code device} variable: a map with driver, attributes, capacity
   * @return the boolean result
   * @throws CelException on a parse error, an unsupported construct or a runtime error
   */
  static boolean matches(String expression, Map<String, Object> device) {
    Cel cel = new Cel(expression);
    Node n = cel.or();
    if (cel.pos != cel.tokens.size()) {
      throw cel.error("unexpected '" + cel.tokens.get(cel.pos) + "'");
    }
    Object v = n.eval(device);
    if (!(v instanceof Boolean b)) {
      throw new CelException(
          "CEL expression " + quote(expression) + " must evaluate to bool, got " + typeOf(v));
    }
    return b;
  }

  private interface Node {
    Object eval(Map<String, Object> device);
  }

  // ---- parser

  private Node or() {
    Node left = and();
    while (accept("||")) {
      Node l = left;
      Node r = and();
      left = d -> bool(l.eval(d)) || bool(r.eval(d));
    }
    return left;
  }

  private Node and() {
    Node left = relation();
    while (accept("&&")) {
      Node l = left;
      Node r = relation();
      left = d -> bool(l.eval(d)) && bool(r.eval(d));
    }
    return left;
  }

  private Node relation() {
    Node left = unary();
    for (String op : List.of("==", "!=", "<=", ">=", "<", ">", "in")) {
      if (accept(op)) {
        Node l = left;
        Node r = unary();
        return d -> compare(op, l.eval(d), r.eval(d));
      }
    }
    return left;
  }

  private Node unary() {
    if (accept("!")) {
      Node n = unary();
      return d -> !bool(n.eval(d));
    }
    if (accept("-")) {
      Node n = unary();
      return d -> -((Long) n.eval(d));
    }
    return postfix(primary());
  }

  private Node postfix(Node target) {
    while (true) {
      if (accept(".")) {
        String name = next();
        if (accept("(")) {
          List<Node> args = arguments();
          Node t = target;
          target = d -> method(t.eval(d), name, args.stream().map(a -> a.eval(d)).toList());
        } else {
          Node t = target;
          target = d -> select(t.eval(d), name);
        }
      } else if (accept("[")) {
        Node key = or();
        expect("]");
        Node t = target;
        target = d -> select(t.eval(d), String.valueOf(key.eval(d)));
      } else {
        return target;
      }
    }
  }

  private Node primary() {
    String t = next();
    if (t.equals("(")) {
      Node n = or();
      expect(")");
      return n;
    }
    if (t.startsWith("\"") || t.startsWith("'")) {
      String s = t.substring(1, t.length() - 1);
      return d -> s;
    }
    if (Character.isDigit(t.charAt(0))) {
      long v = Long.parseLong(t);
      return d -> v;
    }
    if (t.equals("true") || t.equals("false")) {
      boolean v = Boolean.parseBoolean(t);
      return d -> v;
    }
    if (t.equals("device")) {
      return d -> d;
    }
    if (t.equals("quantity") && accept("(")) {
      List<Node> args = arguments();
      if (args.size() != 1) {
        throw error("quantity() takes one string");
      }
      return d -> Quantity.getAmountInBytes(new Quantity(String.valueOf(args.get(0).eval(d))));
    }
    throw error(
        "'"
            + t
            + "' is not supported by the testkit's CEL subset (device, literals, comparisons, &&,"
            + " ||, !, in, quantity(), compareTo, startsWith, endsWith, contains)");
  }

  private List<Node> arguments() {
    List<Node> args = new ArrayList<>();
    if (accept(")")) {
      return args;
    }
    do {
      args.add(or());
    } while (accept(","));
    expect(")");
    return args;
  }

  private boolean accept(String token) {
    if (pos < tokens.size() && tokens.get(pos).equals(token)) {
      pos++;
      return true;
    }
    return false;
  }

  private void expect(String token) {
    if (!accept(token)) {
      throw error("expected '" + token + "'");
    }
  }

  private String next() {
    if (pos >= tokens.size()) {
      throw error("unexpected end of expression");
    }
    return tokens.get(pos++);
  }

  private CelException error(String what) {
    return new CelException("CEL expression " + quote(source) + ": " + what);
  }

  // ---- evaluation

  private static boolean bool(Object v) {
    if (v instanceof Boolean b) {
      return b;
    }
    throw new CelException("expected bool, got " + typeOf(v));
  }

  private static Object select(Object target, String name) {
    if (target instanceof Map<?, ?> m) {
      if (!m.containsKey(name)) {
        throw new CelException("no such key: " + name);
      }
      return m.get(name);
    }
    throw new CelException("cannot select '" + name + "' from " + typeOf(target));
  }

  private static Object method(Object target, String name, List<Object> args) {
    if (target instanceof BigDecimal q && args.size() == 1 && args.get(0) instanceof BigDecimal o) {
      switch (name) {
        case "compareTo":
          return (long) q.compareTo(o);
        case "isGreaterThan":
          return q.compareTo(o) > 0;
        case "isLessThan":
          return q.compareTo(o) < 0;
        default:
          break;
      }
    }
    if (target instanceof String s && args.size() == 1 && args.get(0) instanceof String o) {
      switch (name) {
        case "startsWith":
          return s.startsWith(o);
        case "endsWith":
          return s.endsWith(o);
        case "contains":
          return s.contains(o);
        default:
          break;
      }
    }
    throw new CelException(
        "no such overload: " + typeOf(target) + "." + name + " (" + args.size() + " arguments)");
  }

  @SuppressWarnings("unchecked")
  private static Object compare(String op, Object l, Object r) {
    if (op.equals("in")) {
      if (r instanceof Map<?, ?> m) {
        return m.containsKey(String.valueOf(l));
      }
      throw new CelException("'in' needs a map, got " + typeOf(r));
    }
    if (op.equals("==") || op.equals("!=")) {
      if (l != null && r != null && l.getClass() != r.getClass()) {
        throw new CelException("no such overload: " + typeOf(l) + " " + op + " " + typeOf(r));
      }
      boolean eq =
          l instanceof BigDecimal a && r instanceof BigDecimal b
              ? a.compareTo(b) == 0
              : Objects.equals(l, r);
      return op.equals("==") == eq;
    }
    if (l instanceof Comparable<?> a && r != null && l.getClass() == r.getClass()) {
      int c = ((Comparable<Object>) a).compareTo(r);
      return switch (op) {
        case "<" -> c < 0;
        case "<=" -> c <= 0;
        case ">" -> c > 0;
        default -> c >= 0;
      };
    }
    throw new CelException("no such overload: " + typeOf(l) + " " + op + " " + typeOf(r));
  }

  private static String typeOf(Object v) {
    if (v == null) {
      return "null";
    }
    if (v instanceof Map<?, ?>) {
      return "map";
    }
    if (v instanceof BigDecimal) {
      return "quantity";
    }
    if (v instanceof Long) {
      return "int";
    }
    if (v instanceof Boolean) {
      return "bool";
    }
    return "string";
  }

  private static String quote(String s) {
    return '"' + s + '"';
  }

  // ---- tokens

  private static List<String> tokenize(String s) {
    List<String> out = new ArrayList<>();
    int i = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '"' || c == '\'') {
        int end = s.indexOf(c, i + 1);
        if (end < 0) {
          throw new CelException("CEL expression " + quote(s) + ": unterminated string");
        }
        out.add(s.substring(i, end + 1));
        i = end + 1;
      } else if (Character.isLetterOrDigit(c) || c == '_') {
        int j = i;
        while (j < s.length() && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) {
          j++;
        }
        out.add(s.substring(i, j));
        i = j;
      } else {
        String two = i + 1 < s.length() ? s.substring(i, i + 2) : "";
        if (List.of("==", "!=", "<=", ">=", "&&", "||").contains(two)) {
          out.add(two);
          i += 2;
        } else if ("()[].,!<>-".indexOf(c) >= 0) {
          out.add(String.valueOf(c));
          i++;
        } else {
          throw new CelException(
              "CEL expression " + quote(s) + ": '" + c + "' is not supported by the testkit");
        }
      }
    }
    return out;
  }
}
