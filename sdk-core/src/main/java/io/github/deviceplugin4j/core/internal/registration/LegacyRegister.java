package io.github.deviceplugin4j.core.internal.registration;

import io.github.deviceplugin4j.core.DevicePluginException;
import io.github.deviceplugin4j.core.RegistrationException;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.github.deviceplugin4j.core.internal.config.Shared;
import io.github.deviceplugin4j.core.internal.requests.ApiAdapter;
import io.github.deviceplugin4j.core.internal.requests.ApiVersions;
import io.github.deviceplugin4j.core.internal.requests.RequestHandler;
import io.github.deviceplugin4j.core.internal.transport.SocketFiles;
import io.github.deviceplugin4j.core.internal.transport.UdsChannels;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import java.net.ConnectException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;

/**
 * One legacy {@code Register} call on {@code kubelet.sock}, negotiating the API version: each
 * version the SDK speaks is tried in order of preference while the kubelet refuses the version.
 */
final class LegacyRegister {

  private static final Logger LOG = Loggers.resource();
  private static final Pattern KUBELET_VERSIONS =
      Pattern.compile("[Ss]upported versions? (?:is|are):? *\\[([^\\]]*)\\]");
  private static final Pattern MANAGER_VERSION = Pattern.compile("manager version, ([^,]+),");

  private final String name;
  private final Shared shared;
  private final Path kubeletSocket;
  private volatile String lastOffered;
  private volatile ClientCall<byte[], byte[]> current;
  private volatile boolean cancelled;

  /**
   * Delays, in ms, of the quick retries after a refused connection. The kubelet's socket file
   * appears when it binds, a moment before it listens: a plugin that connects on the file's create
   * event can be refused in between, and its next attempt after the backoff would come seconds
   * later. About 0.2 s in all; then the failure is reported and the backoff applies.
   */
  static final long[] REFUSED_RETRY_MS = {2, 5, 10, 20, 50, 100};

  LegacyRegister(String name, Shared shared, Path kubeletSocket) {
    this.name = name;
    this.shared = shared;
    this.kubeletSocket = kubeletSocket;
  }

  /**
   * Registers an endpoint (the socket's file name in the plugin directory). Each version tried is
   * one call on a gRPC channel (and connection) of its own, started on the calling thread; every
   * step and the outcome run on {@code executor}. Completes with the accepted API version, or fails
   * with a {@link DevicePluginException} naming what to do.
   */
  CompletableFuture<String> register(String endpoint, RequestHandler requests, Executor executor) {
    return register(
        endpoint, requests.preStartRequired(), requests.preferredAllocationAvailable(), executor);
  }

  /** {@link #register(String, RequestHandler, Executor)} with the options the Register sends. */
  CompletableFuture<String> register(
      String endpoint, boolean preStartRequired, boolean preferredAvailable, Executor executor) {
    Attempt a =
        new Attempt(
            endpoint,
            preStartRequired,
            preferredAvailable,
            executor,
            SocketFiles.identity(kubeletSocket),
            new CompletableFuture<>());
    tryVersion(a, 0, 0);
    return a.result;
  }

  /** One registration: what each version tried uses, the kubelet.sock it started with. */
  private record Attempt(
      String endpoint,
      boolean preStartRequired,
      boolean preferredAvailable,
      Executor executor,
      SocketFiles.Identity socketFile,
      CompletableFuture<String> result) {}

  /** Ends the call under way, if any, with CANCELLED (the plugin stops). */
  void cancel() {
    cancelled = true;
    ClientCall<byte[], byte[]> c = current;
    if (c != null) {
      c.cancel("the plugin is stopping", null);
    }
  }

  private void tryVersion(Attempt a, int index, int refused) {
    CompletableFuture<String> result = a.result;
    if (cancelled) {
      result.completeExceptionally(
          registerError(Status.CANCELLED.withDescription("call cancelled"), false));
      return;
    }
    ApiAdapter adapter = shared.config().adapters().get(index);
    lastOffered = adapter.version();
    CompletableFuture<byte[]> answer =
        call(
            adapter.registerMethod(),
            adapter.registerRequest(name, a.endpoint, a.preStartRequired, a.preferredAvailable));
    answer.whenCompleteAsync(
        (ok, error) -> {
          if (error == null) {
            result.complete(adapter.version());
            return;
          }
          Status status = Status.fromThrowable(error);
          if (refused < REFUSED_RETRY_MS.length
              && isRefusedConnection(status)
              && stillTheSameSocket(a.socketFile)) {
            try {
              shared
                  .timer()
                  .schedule(
                      () -> a.executor.execute(() -> tryVersion(a, index, refused + 1)),
                      REFUSED_RETRY_MS[refused],
                      TimeUnit.MILLISECONDS);
              return;
            } catch (RejectedExecutionException e) {
              // shutting down: report the refusal
            }
          }
          boolean versionRefused = isVersionRefusal(status);
          if (versionRefused && index + 1 < shared.config().adapters().size() && !result.isDone()) {
            LOG.info(
                "{}: the kubelet refused API version {} ({}); trying {}",
                name,
                adapter.version(),
                status.getDescription(),
                shared.config().adapters().get(index + 1).version());
            tryVersion(a, index + 1, 0);
            return;
          }
          result.completeExceptionally(registerError(status, versionRefused));
        },
        a.executor);
  }

  /**
   * One unary call to the kubelet's socket on a channel of its own, shut down when the call ends. A
   * cancel ({@link #cancel()}) before the call is made takes effect as it starts. (A channel kept
   * from one call to the next and put idle after each, tried for issue 37, made the first Register
   * with a newly started kubelet fail with "UNAVAILABLE: io exception" in 2 of about 9 training
   * runs on a loaded machine, and 4 runs with a channel per call passed; the channel per call stays
   * until that is understood, and the start-up rehearsal runs this code before the first
   * registration.)
   */
  private CompletableFuture<byte[]> call(String method, byte[] request) {
    CompletableFuture<byte[]> result = new CompletableFuture<>();
    ManagedChannel channel = UdsChannels.open(kubeletSocket, shared.group());
    result.whenComplete((answer, error) -> channel.shutdownNow());
    ClientCall<byte[], byte[]> call =
        UdsChannels.start(
            channel, method, request, shared.config().registerDeadline().toNanos(), result);
    current = call;
    if (cancelled) {
      call.cancel("the plugin is stopping", null);
    }
    return result;
  }

  /** The API version the last Register call offered; the most preferred one before any call. */
  String lastOffered() {
    String v = lastOffered;
    return v != null ? v : shared.config().adapters().get(0).version();
  }

  /**
   * Whether kubelet.sock is still the socket file the call started with. A refused connection is
   * retried only then: a file replaced meanwhile (a new kubelet, or something that is not a socket)
   * is the subject of its own create event and attempt, and the outcome of this one must describe
   * the file it was made on.
   */
  private boolean stillTheSameSocket(SocketFiles.Identity socketFile) {
    return socketFile != null
        && SocketFiles.isSocket(kubeletSocket)
        && SocketFiles.sameFile(socketFile, SocketFiles.identity(kubeletSocket));
  }

  /** A connection the kubelet's socket refused: it exists, but nothing listens on it (yet). */
  static boolean isRefusedConnection(Status status) {
    if (status.getCode() != Status.Code.UNAVAILABLE) {
      return false;
    }
    for (Throwable t = status.getCause(); t != null; t = t.getCause()) {
      if (t instanceof ConnectException
          && String.valueOf(t.getMessage()).toLowerCase(Locale.ROOT).contains("refused")) {
        return true;
      }
    }
    return false;
  }

  private static boolean isVersionRefusal(Status status) {
    String d = String.valueOf(status.getDescription()).toLowerCase(Locale.ROOT);
    return status.getCode() != Status.Code.UNAVAILABLE
        && d.contains("version")
        && d.contains("not supported");
  }

  private DevicePluginException registerError(Status status, boolean versionRefused) {
    List<String> sdk = ApiVersions.versions(shared.config().adapters());
    String text = status.getCode() + ": " + status.getDescription();
    if (versionRefused) {
      List<String> kubelet = parseVersions(String.valueOf(status.getDescription()));
      return new RegistrationException(
          "no kubelet device plugin API version fits: the kubelet supports "
              + (kubelet.isEmpty() ? "(unknown)" : kubelet)
              + ", this SDK speaks "
              + sdk
              + " (kubelet said: "
              + status.getDescription()
              + "); upgrade deviceplugin4j or the kubelet",
          kubelet,
          sdk);
    }
    if (status.getCode() == Status.Code.UNAVAILABLE
        || status.getCode() == Status.Code.DEADLINE_EXCEEDED
        || status.getCode() == Status.Code.CANCELLED) {
      // CANCELLED: the kubelet went away in the middle of the call (it restarts); not a refusal.
      return new Unreachable(
          "cannot reach the kubelet at " + kubeletSocket + " to register " + name + ": " + text);
    }
    return new RegistrationException(
        "the kubelet refused to register " + name + ": " + text, List.of(), sdk);
  }

  /** The versions a kubelet's refusal names, if any. */
  static List<String> parseVersions(String text) {
    Matcher m = KUBELET_VERSIONS.matcher(text);
    if (m.find()) {
      return Arrays.stream(m.group(1).split("[\\s,]+"))
          .map(v -> v.replace("\"", "").replace("'", "").trim())
          .filter(v -> !v.isEmpty())
          .toList();
    }
    Matcher manager = MANAGER_VERSION.matcher(text);
    if (manager.find()) {
      return List.of(manager.group(1).trim());
    }
    return List.of();
  }

  /** The kubelet's socket did not answer (UNAVAILABLE, a deadline, or the call cut off). */
  static final class Unreachable extends DevicePluginException {
    private static final long serialVersionUID = 1L;

    Unreachable(String message) {
      super(message);
    }
  }
}
