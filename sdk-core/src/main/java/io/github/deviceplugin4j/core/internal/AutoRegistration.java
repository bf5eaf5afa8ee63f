package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.RegistrationMode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * AUTO mode on a node with a plugins registry directory: plugin watcher registration, until the
 * plugin watcher has ignored the socket for {@link EngineConfig#watcherFallback()} while {@code
 * kubelet.sock} exists; then, once, legacy registration: the registry socket is closed and the
 * resource is served and registered in the device plugin directory. {@link #mode()} reports the
 * mode in use.
 */
final class AutoRegistration implements RegistrationStrategy {

  private static final Logger LOG = LoggerFactory.getLogger(ResourcePlugin.class);

  private final RegistrationContext ctx;
  private volatile RegistrationStrategy current;

  /**
   * AUTO registration, starting with the plugin watcher.
   *
   * @param ctx the resource's registration context
   */
  AutoRegistration(RegistrationContext ctx) {
    this.ctx = ctx;
    this.current = new WatcherRegistration(ctx, this::fallBack);
  }

  /** The plugin watcher never asked for the socket, but a kubelet runs: go legacy. */
  private void fallBack(long waitedNanos) {
    RegistrationStrategy watcher = current;
    LegacyRegistration legacy = new LegacyRegistration(ctx);
    LOG.warn(
        "{}: the kubelet's plugin watcher has not asked for {} in {} s although {} exists (a"
            + " kubelet with another root directory, or one that does not watch {}?); falling back"
            + " to legacy registration on {} (set the registration mode to fix this)",
        ctx.name,
        watcher.socket(),
        TimeUnit.NANOSECONDS.toSeconds(waitedNanos),
        ctx.kubeletSocket,
        ctx.config.registryDir(),
        legacy.socket());
    current = legacy;
    watcher.close();
    legacy.takeOver("fallback to legacy registration");
  }

  @Override
  public RegistrationMode mode() {
    return current.mode();
  }

  @Override
  public Path socket() {
    return current.socket();
  }

  @Override
  public boolean replaced() {
    return current.replaced();
  }

  @Override
  public void start() throws IOException {
    current.start();
  }

  @Override
  public boolean serving() {
    return current.serving();
  }

  @Override
  public void register(String reason) {
    current.register(reason);
  }

  @Override
  public void lost(String reason) {
    current.lost(reason);
  }

  @Override
  public void kubeletSocketCreated() {
    current.kubeletSocketCreated();
  }

  @Override
  public void safetyCheck() {
    current.safetyCheck();
  }

  @Override
  public void streamsMissing() {
    current.streamsMissing();
  }

  @Override
  public void pluginDirFileCreated(String fileName) {
    current.pluginDirFileCreated(fileName);
  }

  @Override
  public void rescanInstances() {
    current.rescanInstances();
  }

  @Override
  public void close() {
    current.close();
  }
}
