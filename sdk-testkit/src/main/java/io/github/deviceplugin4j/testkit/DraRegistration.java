package io.github.deviceplugin4j.testkit;

import java.time.Instant;
import java.util.Objects;

/**
 * One accepted registration of a DRA driver's kubelet plugin through the plugins registry.
 *
 * @param driver the driver name ({@code PluginInfo.name})
 * @param endpoint the absolute path of the driver's DRA socket ({@code PluginInfo.endpoint})
 * @param service the gRPC service the kubelet chose, e.g. {@code
 *     k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin}
 * @param registrySocket the registration socket found in the plugins registry
 * @param at when the kubelet accepted it
 * @param seq the event log position at which it was accepted
 * @param nanos {@link System#nanoTime()} when it was accepted
 */
public record DraRegistration(
    String driver,
    String endpoint,
    String service,
    String registrySocket,
    Instant at,
    long seq,
    long nanos) {

  /**
   * Checks the components.
   *
   * @param driver see {@link #driver()}
   * @param endpoint see {@link #endpoint()}
   * @param service see {@link #service()}
   * @param registrySocket see {@link #registrySocket()}
   * @param at see {@link #at()}
   * @param seq see {@link #seq()}
   * @param nanos see {@link #nanos()}
   */
  public DraRegistration {
    Objects.requireNonNull(driver, "driver");
    Objects.requireNonNull(endpoint, "endpoint");
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(registrySocket, "registrySocket");
    Objects.requireNonNull(at, "at");
  }

  /**
   * Whether this registration was accepted after a mark was taken.
   *
   * @param mark a mark from {@link FakeKubelet#mark()}
   * @return true when it is newer than the mark
   */
  public boolean isAfter(Mark mark) {
    return seq > mark.seq();
  }
}
