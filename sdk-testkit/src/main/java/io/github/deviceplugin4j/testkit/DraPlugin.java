package io.github.deviceplugin4j.testkit;

import io.grpc.ManagedChannel;
import java.nio.file.Path;

/**
 * One registered plugin instance of a DRA driver: where it was found, where it serves, the service
 * the kubelet chose for it and the connection to it. Immutable; compared by identity, so a plugin
 * that registers again is a new instance.
 */
final class DraPlugin {
  final String driver;
  final Path endpoint;
  final String service;
  final Path socket;
  final ManagedChannel channel;

  DraPlugin(String driver, Path endpoint, String service, Path socket, ManagedChannel channel) {
    this.driver = driver;
    this.endpoint = endpoint;
    this.service = service;
    this.socket = socket;
    this.channel = channel;
  }
}
