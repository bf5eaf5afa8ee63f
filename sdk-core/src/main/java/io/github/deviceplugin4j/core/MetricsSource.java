package io.github.deviceplugin4j.core;

import java.io.IOException;
import java.io.OutputStream;

/**
 * What the host's HTTP endpoint serves at {@code /metrics}, e.g. a Prometheus scrape. The core has
 * no metrics library; the {@code deviceplugin4j-micrometer} module provides one of these over
 * Micrometer's Prometheus registry.
 */
@Experimental
@FunctionalInterface
public interface MetricsSource {

  /**
   * Writes the current metrics.
   *
   * @param accept the request's {@code Accept} header, or an empty string when it had none; a
   *     source that knows several formats (Prometheus text, OpenMetrics) picks one by it
   * @param out where to write the body; the endpoint buffers it and sends it after this returns
   * @return the content type of what was written, e.g. {@code text/plain; version=0.0.4;
   *     charset=utf-8}
   * @throws IOException when writing fails; the endpoint answers 500 without details
   */
  String scrape(String accept, OutputStream out) throws IOException;
}
