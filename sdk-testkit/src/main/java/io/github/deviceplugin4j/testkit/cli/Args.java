package io.github.deviceplugin4j.testkit.cli;

import io.github.deviceplugin4j.testkit.KubeletProfile;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Parses {@code --name value} options, {@code --flag} switches, and a command after {@code --}. */
final class Args {
  final Map<String, String> options = new HashMap<>();
  final List<String> command = new ArrayList<>();

  static Args parse(List<String> args, Set<String> withValue, Set<String> flags) {
    Args a = new Args();
    for (int i = 0; i < args.size(); i++) {
      String s = args.get(i);
      if (s.equals("--")) {
        a.command.addAll(args.subList(i + 1, args.size()));
        break;
      }
      String name = s;
      String value = null;
      int eq = s.indexOf('=');
      if (s.startsWith("--") && eq > 0) {
        name = s.substring(0, eq);
        value = s.substring(eq + 1);
      }
      if (withValue.contains(name)) {
        if (value == null) {
          if (i + 1 >= args.size()) {
            throw new UsageException(name + " needs a value");
          }
          value = args.get(++i);
        }
        a.options.put(name, value);
      } else if (flags.contains(name) && value == null) {
        a.options.put(name, "true");
      } else {
        throw new UsageException("unknown option: " + s);
      }
    }
    return a;
  }

  String get(String name) {
    return options.get(name);
  }

  boolean flag(String name) {
    return options.containsKey(name);
  }

  long number(String name, long dflt) {
    String v = options.get(name);
    if (v == null) {
      return dflt;
    }
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new UsageException(name + " needs a number, got " + v);
    }
  }

  /** The profile of {@code --kubelet-version} (default {@link KubeletProfile#LATEST}). */
  static KubeletProfile kubeletProfile(Args a) {
    String v = a.get("--kubelet-version");
    if (v == null) {
      return KubeletProfile.LATEST;
    }
    try {
      return KubeletProfile.forVersion(v);
    } catch (IllegalArgumentException e) {
      throw new UsageException("--kubelet-version: " + e.getMessage());
    }
  }

  /** A command-line mistake: printed with the usage, exit code 2. */
  static final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageException(String message) {
      super(message);
    }
  }
}
