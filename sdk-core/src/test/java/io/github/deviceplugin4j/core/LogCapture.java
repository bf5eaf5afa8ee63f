package io.github.deviceplugin4j.core;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Captures what the SDK logs (slf4j-simple writes to {@code System.err}) while still printing it.
 */
final class LogCapture implements AutoCloseable {

  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  LogCapture() {
    System.setErr(
        new PrintStream(
            new OutputStream() {
              @Override
              public void write(int b) {
                synchronized (captured) {
                  original.write(b);
                  captured.write(b);
                }
              }

              @Override
              public void write(byte[] b, int off, int len) {
                synchronized (captured) {
                  original.write(b, off, len);
                  captured.write(b, off, len);
                }
              }
            },
            true,
            StandardCharsets.UTF_8));
  }

  /** Every line captured so far. */
  List<String> lines() {
    synchronized (captured) {
      return Arrays.asList(captured.toString(StandardCharsets.UTF_8).split("\n"));
    }
  }

  /** How many captured lines contain a text. */
  long count(String text) {
    return lines().stream().filter(l -> l.contains(text)).count();
  }

  @Override
  public void close() {
    System.setErr(original);
  }
}
