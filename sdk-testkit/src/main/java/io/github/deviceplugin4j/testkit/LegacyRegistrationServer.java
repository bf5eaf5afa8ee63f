package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.RegisterRequest;
import io.github.deviceplugin4j.api.v1beta1.RegistrationGrpc;
import io.github.deviceplugin4j.testkit.KubeletEvent.Facts;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.PluginConnector.ConnectException;
import io.github.deviceplugin4j.testkit.internal.ResourceNames;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The kubelet's {@code v1beta1.Registration} service on {@code kubelet.sock}: checks the version
 * and the extended resource name with the kubelet's texts, joins the endpoint to the plugin
 * directory like Go's {@code filepath.Join}, connects before answering, and keeps every attempt.
 * Errors reach the plugin as gRPC status {@code UNKNOWN}. One instance serves every incarnation of
 * the socket.
 */
final class LegacyRegistrationServer extends RegistrationGrpc.RegistrationImplBase {
  private final Path pluginDir;
  private final List<String> supportedVersions;
  private final PluginConnector connector;
  private final EventJournal journal;
  // Guarded by the journal's lock.
  private final List<RegisterAttempt> attempts = new ArrayList<>();
  private final ReentrantLock lock;

  LegacyRegistrationServer(
      Path pluginDir,
      List<String> supportedVersions,
      PluginConnector connector,
      EventJournal journal) {
    this.pluginDir = pluginDir;
    this.supportedVersions = List.copyOf(supportedVersions);
    this.connector = connector;
    this.journal = journal;
    this.lock = journal.lock();
  }

  @Override
  public void register(RegisterRequest r, StreamObserver<Empty> response) {
    Optional<String> error = handle(r);
    if (error.isPresent()) {
      response.onError(Status.UNKNOWN.withDescription(error.get()).asRuntimeException());
    } else {
      response.onNext(Empty.getDefaultInstance());
      response.onCompleted();
    }
  }

  /**
   * Handles one {@code Register} call.
   *
   * @return the kubelet's error text, empty when the plugin was registered
   */
  Optional<String> handle(RegisterRequest r) {
    Instant at = journal.now();
    String resource = r.getResourceName();
    String error = null;
    if (!supportedVersions.contains(r.getVersion())) {
      error = ResourceNames.unsupportedVersionError(r.getVersion(), supportedVersions);
    } else if (!ResourceNames.isExtendedResourceName(resource)) {
      error = ResourceNames.invalidNameError(resource);
    } else {
      Path endpoint = joinLikeGo(pluginDir, r.getEndpoint());
      try {
        connector.connect(resource, endpoint, Registration.Mode.LEGACY, r.getVersion(), null);
      } catch (ConnectException e) {
        error = e.getMessage();
      }
    }
    lock.lock();
    try {
      attempts.add(
          new RegisterAttempt(
              at,
              r.getVersion(),
              r.getEndpoint(),
              resource,
              r.hasOptions(),
              r.getOptions().getPreStartRequired(),
              r.getOptions().getGetPreferredAllocationAvailable(),
              Optional.ofNullable(error)));
      journal.record(
          Kind.REGISTER,
          resource,
          error == null ? Outcome.OK : Outcome.FAILED,
          error == null
              ? "endpoint=" + r.getEndpoint() + " version=" + r.getVersion()
              : error + " (version=" + r.getVersion() + " endpoint=" + r.getEndpoint() + ")",
          error == null
              ? Facts.of().endpoint(joinLikeGo(pluginDir, r.getEndpoint())).version(r.getVersion())
              : Facts.NONE);
    } finally {
      lock.unlock();
    }
    return Optional.ofNullable(error);
  }

  /** Every {@code Register} call so far, accepted or rejected. */
  List<RegisterAttempt> attempts() {
    lock.lock();
    try {
      return List.copyOf(attempts);
    } finally {
      lock.unlock();
    }
  }

  /** Go's filepath.Join: an absolute second part is not absolute any more; the result is clean. */
  static Path joinLikeGo(Path dir, String name) {
    String stripped = name.replaceFirst("^/+", "");
    return (stripped.isEmpty() ? dir : dir.resolve(stripped)).normalize();
  }
}
