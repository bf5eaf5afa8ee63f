package io.github.deviceplugin4j.dra;

/**
 * Optional capability of a {@link DraDriver}: it reports device health. A driver that does not
 * implement it answers the kubelet's health watch with {@code UNIMPLEMENTED}, which tells the
 * kubelet to stop asking.
 *
 * <pre>{@code
 * class FpgaDriver implements DraDriver, DraHealthReporter {
 *   public void startHealth(DraHealthSink sink) {
 *     monitor.onChange(states -> sink.publish(toHealth(states)));
 *   }
 *   ...
 * }
 * }</pre>
 */
public interface DraHealthReporter {

  /**
   * Called once when the host starts. The driver keeps the sink and publishes the complete list of
   * its devices' health whenever it changes, from its own threads; the first list as soon as it is
   * known.
   *
   * @param sink where to publish
   * @throws Exception when health reporting cannot start; the host does not start either
   */
  void startHealth(DraHealthSink sink) throws Exception;

  /** Called once when the host stops; stop the driver's health threads here. */
  default void stopHealth() {}
}
