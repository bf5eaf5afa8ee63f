package io.github.deviceplugin4j.reliability;

/**
 * Suite sizes from system properties: the build passes the fast defaults, the {@code soak} profile
 * the full sizes (see the module's pom). A run from an IDE gets the fast defaults below.
 */
final class Sizes {
  private Sizes() {}

  static int legacyRestarts() {
    return get("reliability.restarts.legacy", 100);
  }

  static int watcherRestarts() {
    return get("reliability.restarts.watcher", 40);
  }

  static int kubeletAbsentSeconds() {
    return get("reliability.kubeletAbsentSeconds", 3);
  }

  static int cancels() {
    return get("reliability.cancels", 200);
  }

  static int drops() {
    return get("reliability.drops", 1);
  }

  static int allocateThreads() {
    return get("reliability.allocate.threads", 16);
  }

  static int allocateCallsPerThread() {
    return get("reliability.allocate.calls", 500);
  }

  static int socketCycles() {
    return get("reliability.socketCycles", 30);
  }

  private static int get(String key, int fallback) {
    String v = System.getProperty(key);
    if (v == null || v.isBlank() || v.startsWith("${")) {
      return fallback;
    }
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("system property " + key + " must be a number: " + v, e);
    }
  }
}
