package io.github.deviceplugin4j.testkit.cli;

import java.util.Collection;

/** A flat JSON object writer: string, number and boolean values, and arrays of strings. */
final class Json {
  private final StringBuilder b = new StringBuilder("{");
  private boolean first = true;

  static Json object(String type) {
    return new Json().put("type", type);
  }

  Json put(String key, String value) {
    key(key);
    quote(b, value);
    return this;
  }

  Json put(String key, long value) {
    key(key);
    b.append(value);
    return this;
  }

  Json put(String key, boolean value) {
    key(key);
    b.append(value);
    return this;
  }

  Json put(String key, Collection<String> values) {
    key(key);
    b.append('[');
    boolean f = true;
    for (String v : values) {
      if (!f) {
        b.append(',');
      }
      f = false;
      quote(b, v);
    }
    b.append(']');
    return this;
  }

  private void key(String key) {
    if (!first) {
      b.append(',');
    }
    first = false;
    quote(b, key);
    b.append(':');
  }

  static void quote(StringBuilder b, String s) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        default -> {
          if (c < 0x20 || c == 0x2028 || c == 0x2029) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }

  @Override
  public String toString() {
    return b + "}";
  }
}
