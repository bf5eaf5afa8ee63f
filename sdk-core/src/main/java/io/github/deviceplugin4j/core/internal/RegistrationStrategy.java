package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.core.RegistrationMode;
import java.io.IOException;
import java.nio.file.Path;

/**
 * How one resource registers with the kubelet: the mode's own state and its decisions on every
 * trigger. {@link LegacyRegistration} calls {@code Register} on {@code kubelet.sock}; {@link
 * WatcherRegistration} leaves the kubelet's plugin watcher to find the socket, and in AUTO mode
 * falls back to legacy registration (the resource then changes its strategy).
 *
 * <p>The triggers run on the resource's control executor, one at a time; {@link #start()} runs on
 * the caller's thread before any of them. {@link #mode()}, {@link #socket()} and {@link
 * #replaced()} may be read from any thread.
 */
interface RegistrationStrategy {

  /** The mode in use: LEGACY or PLUGIN_WATCHER (AUTO reports the one it is in). */
  RegistrationMode mode();

  /** The socket the DevicePlugin service is served on now. */
  Path socket();

  /** Whether a newer instance of the resource took over: this one no longer registers. */
  boolean replaced();

  /** Serves the socket, on the caller's thread, so that its failure reaches the host's start. */
  void start() throws IOException;

  /** Whether the socket file is still the one this strategy serves. */
  boolean serving();

  /** Registers now, or right after the attempt in flight; the reason is for the log. */
  void register(String reason);

  /** The registration is lost (an outage starts); the reason is for the log. */
  void lost(String reason);

  /** {@code kubelet.sock} was created. */
  void kubeletSocketCreated();

  /** Safety net for missed file events: checks the socket files and the registration. */
  void safetyCheck();

  /** The kubelet has had no ListAndWatch stream open for the whole grace period. */
  void streamsMissing();

  /** A file was created in the plugin directory (perhaps a newer instance's socket). */
  default void pluginDirFileCreated(String fileName) {}

  /** Events may have been missed in the plugin directory: look for a newer instance. */
  default void rescanInstances() {}

  /** Stops registering and closes every socket (the superseded ones too) and the lease, if any. */
  void close();
}
