package io.github.deviceplugin4j.core.internal.registration;

import io.github.deviceplugin4j.core.internal.config.Shared;
import io.github.deviceplugin4j.core.internal.requests.ApiAdapter;
import io.github.deviceplugin4j.core.internal.transport.UdsChannels;
import io.github.deviceplugin4j.core.internal.transport.UdsServer;
import io.grpc.ManagedChannel;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A rehearsal, at start, of the code a plugin runs once per kubelet start, so that a node's first
 * registration and each re-registration after a kubelet restart find it loaded, linked and run
 * before (on JDK 25 with an AOT cache, its profile is the training's; without one, the rehearsal is
 * its first run): the legacy {@code Register} call through {@link LegacyRegister} itself, to a
 * private kubelet-like registration server in a private directory of the plugin directory (the
 * kubelet never looks into it), which dials the plugin back as the kubelet does, asks {@code
 * GetDevicePluginOptions} and reads the first {@code ListAndWatch} list, then answers. The plugin's
 * side of the dial-back is a private server given by the caller (the socket warm-up's, whose
 * service reports to no observer and whose stream watches a private copy of the devices), so no
 * observer, listener, log line or device state of the real resource sees any of it.
 */
public final class RegistrationRehearsal {

  private RegistrationRehearsal() {}

  /**
   * Rehearses one registration and waits for it, at most {@code budgetNanos}.
   *
   * @param shared the host's event loop, timer and configuration
   * @param resource the resource name sent in the Register
   * @param pluginSocket the private server to dial back: the plugin's side of the rehearsal
   * @param preStartRequired what the Register advertises
   * @param preferredAvailable what the Register advertises
   * @param budgetNanos the longest wait
   * @return whether every step succeeded within the budget
   */
  public static boolean run(
      Shared shared,
      String resource,
      Path pluginSocket,
      boolean preStartRequired,
      boolean preferredAvailable,
      long budgetNanos) {
    List<ServerServiceDefinition> services = new ArrayList<>();
    Set<String> methods = new HashSet<>();
    for (ApiAdapter a : shared.config().adapters()) {
      if (methods.add(a.registerMethod())) {
        services.add(
            UdsChannels.unaryService(
                a.registerMethod(), request -> dialBack(shared, a, pluginSocket, budgetNanos)));
      }
    }
    UdsServer.Standby kubelet = null;
    LegacyRegister register = null;
    try {
      kubelet =
          UdsServer.bind(
              shared.config().pluginDir(),
              shared.config().socketPermissions(),
              services,
              shared.group());
      register = new LegacyRegister(resource, shared, kubelet.path());
      register
          .register(
              pluginSocket.getFileName().toString(),
              preStartRequired,
              preferredAvailable,
              Runnable::run)
          .get(budgetNanos, TimeUnit.NANOSECONDS);
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (IOException | ExecutionException | TimeoutException | RuntimeException e) {
      return false;
    } finally {
      if (register != null) {
        register.cancel();
      }
      if (kubelet != null) {
        kubelet.discard();
      }
    }
  }

  /**
   * What the kubelet does between a Register and its answer: dials the plugin, asks its options and
   * opens ListAndWatch (here: until the first list); the answer is the empty message.
   */
  private static CompletableFuture<byte[]> dialBack(
      Shared shared, ApiAdapter adapter, Path pluginSocket, long deadlineNanos) {
    if (adapter.optionsMethod() == null || adapter.listAndWatchMethod() == null) {
      return CompletableFuture.completedFuture(new byte[0]);
    }
    ManagedChannel channel = UdsChannels.open(pluginSocket, shared.group());
    CompletableFuture<byte[]> options = new CompletableFuture<>();
    UdsChannels.start(channel, adapter.optionsMethod(), new byte[0], deadlineNanos, options);
    return options
        .thenCompose(
            answered -> {
              CompletableFuture<byte[]> first = new CompletableFuture<>();
              UdsChannels.firstMessage(
                  channel, adapter.listAndWatchMethod(), new byte[0], deadlineNanos, first);
              return first;
            })
        .handle(
            (list, error) -> {
              channel.shutdownNow();
              if (error != null) {
                throw Status.fromThrowable(error).asRuntimeException();
              }
              return new byte[0];
            });
  }
}
