package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.api.v1beta1.Device;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.internal.GoErrors;
import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The kubelet's side of a plugin connection over gRPC: dials the plugin's socket (10 s, retrying
 * like a blocking dial), asks {@code GetDevicePluginOptions}, installs the endpoint in the {@link
 * DeviceManagerModel} and runs its {@code ListAndWatch} streams, turning what arrives into model
 * events. Both registration paths (legacy {@code Register} and the plugin watcher) connect here.
 */
final class PluginConnector {
  /** A registration failed while connecting; the message is the kubelet's error text. */
  static final class ConnectException extends Exception {
    private static final long serialVersionUID = 1L;

    ConnectException(String message) {
      super(message);
    }
  }

  private final UdsTransport transport;
  private final DeviceManagerModel model;
  private final EventJournal journal;
  private final Duration rpcTimeout;

  PluginConnector(
      UdsTransport transport, DeviceManagerModel model, EventJournal journal, Duration rpcTimeout) {
    this.transport = transport;
    this.model = model;
    this.journal = journal;
    this.rpcTimeout = rpcTimeout;
  }

  /**
   * Dials the plugin, asks for its options, installs it as the resource's current endpoint and
   * opens {@code ListAndWatch}.
   *
   * @throws ConnectException with the kubelet's text when the dial or the options call fails
   */
  Registration connect(
      String resource, Path socket, Registration.Mode mode, String version, Path registrySocket)
      throws ConnectException {
    ManagedChannel channel = transport.channel(socket);
    boolean ready;
    try {
      ready =
          transport.dial(
              channel,
              FakeKubelet.DIAL_TIMEOUT,
              () ->
                  journal.record(
                      Kind.ENDPOINT_NOT_READY,
                      resource,
                      Outcome.FAILED,
                      "the first connection to "
                          + socket
                          + " failed: a plugin must serve before it registers (the kubelet keeps"
                          + " dialling for up to 10 s)"));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ready = false;
    }
    if (!ready) {
      channel.shutdownNow();
      // dial() in pkg/kubelet/cm/devicemanager/plugin/v1beta1/client.go: a blocking
      // grpc.DialContext with a 10 s context, its error wrapped as "failed to dial device
      // plugin: %v"; a dial that never connects ends with the context's error. What the fake
      // knows beyond that (nothing served on the socket) is in the ENDPOINT_NOT_READY event.
      throw new ConnectException("failed to dial device plugin: context deadline exceeded");
    }
    DevicePluginOptions options;
    try {
      options =
          withTimeout(DevicePluginGrpc.newBlockingStub(channel))
              .getDevicePluginOptions(Empty.getDefaultInstance());
    } catch (StatusRuntimeException e) {
      channel.shutdownNow();
      // PluginConnected in pkg/kubelet/cm/devicemanager/manager.go: "failed to get device plugin
      // options: %v" around grpc-go's status error.
      String msg = "failed to get device plugin options: " + GoErrors.rpcError(e.getStatus());
      journal.record(Kind.GET_DEVICE_PLUGIN_OPTIONS, resource, Outcome.FAILED, msg);
      throw new ConnectException(msg);
    }
    Optional<Registration> reg =
        model.registered(
            resource,
            socket,
            version,
            mode,
            options.getPreStartRequired(),
            options.getGetPreferredAllocationAvailable(),
            registrySocket,
            new Client(channel));
    if (reg.isEmpty()) {
      channel.shutdownNow();
      throw new ConnectException("the kubelet is shutting down");
    }
    return reg.get();
  }

  /** The stub with the fake's deadline for calls the kubelet makes without one. */
  <S extends AbstractStub<S>> S withTimeout(S stub) {
    return rpcTimeout.isZero()
        ? stub
        : stub.withDeadlineAfter(rpcTimeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  static String describe(Status s) {
    return s.getCode() + (s.getDescription() == null ? "" : ": " + s.getDescription());
  }

  /** The channel of an endpoint made by this connector (not one known from the checkpoint). */
  static ManagedChannel channel(Endpoint ep) {
    return ((Client) ep.connection).channel;
  }

  /** One plugin connection: a channel and its current {@code ListAndWatch} call. */
  private final class Client implements DeviceManagerModel.Connection {
    private final ManagedChannel channel;
    private volatile ClientCallStreamObserver<Empty> call;

    Client(ManagedChannel channel) {
      this.channel = channel;
    }

    @Override
    public void openStream(Endpoint ep, int generation) {
      // Not in the context of the Register call that may have started it: that one ends soon.
      Context.ROOT.run(
          () ->
              DevicePluginGrpc.newStub(channel)
                  .listAndWatch(
                      Empty.getDefaultInstance(),
                      new ClientResponseObserver<Empty, ListAndWatchResponse>() {
                        @Override
                        public void beforeStart(ClientCallStreamObserver<Empty> requestStream) {
                          call = requestStream;
                        }

                        @Override
                        public void onNext(ListAndWatchResponse value) {
                          model.listReceived(
                              ep, generation, devices(value), value.getSerializedSize());
                        }

                        @Override
                        public void onError(Throwable t) {
                          Status s = Status.fromThrowable(t);
                          model.streamEnded(
                              ep,
                              generation,
                              describe(s),
                              s.getCode() == Status.Code.RESOURCE_EXHAUSTED);
                        }

                        @Override
                        public void onCompleted() {
                          model.streamEnded(ep, generation, null, false);
                        }
                      }));
    }

    @Override
    public void cancelStream() {
      ClientCallStreamObserver<Empty> c = call;
      if (c != null) {
        c.cancel("cancelled by the kubelet", null);
      }
    }

    @Override
    public void close() {
      channel.shutdownNow();
    }
  }

  private static List<DeviceState> devices(ListAndWatchResponse resp) {
    List<DeviceState> list = new ArrayList<>(resp.getDevicesCount());
    for (Device d : resp.getDevicesList()) {
      List<Long> numa = new ArrayList<>();
      if (d.hasTopology()) {
        d.getTopology().getNodesList().forEach(n -> numa.add(n.getID()));
      }
      list.add(new DeviceState(d.getID(), d.getHealth(), numa));
    }
    return list;
  }
}
