package io.github.deviceplugin4j.testkit;

import java.nio.file.Path;

/**
 * A kubelet client and endpoint for one registration (the kubelet keeps both per plugin). Mutable
 * fields are guarded by the model's lock.
 */
final class Endpoint {
  final String resource;
  final Path socket;
  // Null for an endpoint the kubelet knows only from its checkpoint (after a restart).
  final DeviceManagerModel.Connection connection;
  final boolean preStartRequired;
  final boolean preferredAllocationAvailable;
  final Registration registration;
  final Path registrySocket;
  final boolean fromCheckpoint;
  int generation;
  boolean streamOpen;
  // The endpoint has a stop time: Allocate and PreStartContainer fail on it.
  boolean stopped;
  // The kubelet closed its connection (Disconnect).
  boolean connectionClosed;
  // Belongs to a kubelet process that is gone (restart, close): its callbacks are ignored.
  boolean dead;

  Endpoint(
      String resource,
      Path socket,
      DeviceManagerModel.Connection connection,
      boolean preStartRequired,
      boolean preferredAllocationAvailable,
      Registration registration,
      Path registrySocket,
      boolean fromCheckpoint) {
    this.resource = resource;
    this.socket = socket;
    this.connection = connection;
    this.preStartRequired = preStartRequired;
    this.preferredAllocationAvailable = preferredAllocationAvailable;
    this.registration = registration;
    this.registrySocket = registrySocket;
    this.fromCheckpoint = fromCheckpoint;
  }

  static Endpoint fromCheckpoint(String resource, Endpoint previous) {
    Endpoint e =
        new Endpoint(
            resource,
            previous == null ? Path.of("(checkpoint)") : previous.socket,
            null,
            false,
            false,
            previous == null ? null : previous.registration,
            null,
            true);
    e.stopped = true;
    e.dead = true;
    return e;
  }
}
