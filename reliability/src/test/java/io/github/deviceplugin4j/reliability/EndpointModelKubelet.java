package io.github.deviceplugin4j.reliability;

import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.github.deviceplugin4j.api.v1beta1.RegisterRequest;
import io.github.deviceplugin4j.api.v1beta1.RegistrationGrpc;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;

/**
 * A {@code kubelet.sock} that treats endpoints the way the real kubelet's device manager does
 * (checked in upstream's {@code plugin/v1beta1} server and client), to measure unhealthy windows:
 *
 * <ul>
 *   <li>every {@code Register} dials the endpoint, asks {@code GetDevicePluginOptions}, makes it
 *       the current endpoint and opens {@code ListAndWatch}; the previous connection is never
 *       closed;
 *   <li>when ANY client's stream ends, the resource is disconnected by name: every device turns
 *       unhealthy and the current endpoint is stopped until the next registration;
 *   <li>the window ends when an endpoint registered after the disconnect sends a list with a
 *       healthy device.
 * </ul>
 *
 * One resource; test-only, not the testkit's fake.
 */
final class EndpointModelKubelet implements AutoCloseable {

  /** A time during which the kubelet had the resource disconnected (all devices unhealthy). */
  record Window(long startNanos, long endNanos, String endedStream) {
    double ms() {
      return (endNanos - startNanos) / 1e6;
    }
  }

  private final Path pluginDir;
  private final EventLoopGroup group =
      new MultiThreadIoEventLoopGroup(2, NioIoHandler.newFactory());
  private final Server server;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<String> registrations = new ArrayList<>();
  private final List<Window> windows = new ArrayList<>();
  private final List<Long> registerCalls = new ArrayList<>();
  private final List<Integer> streaming = new ArrayList<>();
  private int disconnects;
  private int generation;
  private int current = -1;
  private long disconnectedSince = -1;
  private String endedStream;
  private boolean closed;

  EndpointModelKubelet(Path pluginDir) throws IOException {
    this.pluginDir = Files.createDirectories(pluginDir);
    server =
        NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(pluginDir.resolve("kubelet.sock")))
            .channelType(NioServerDomainSocketChannel.class)
            .bossEventLoopGroup(group)
            .workerEventLoopGroup(group)
            .withChildOption(ChannelOption.SO_KEEPALIVE, null)
            .addService(new RegistrationService())
            .build()
            .start();
  }

  private final class RegistrationService extends RegistrationGrpc.RegistrationImplBase {
    @Override
    public void register(RegisterRequest request, StreamObserver<Empty> answer) {
      synchronized (EndpointModelKubelet.this) {
        registerCalls.add(System.nanoTime());
      }
      ManagedChannel ch =
          NettyChannelBuilder.forAddress(
                  UnixDomainSocketAddress.of(pluginDir.resolve(request.getEndpoint())))
              .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
              .eventLoopGroup(group)
              .withOption(ChannelOption.SO_KEEPALIVE, null)
              .usePlaintext()
              .build();
      try {
        DevicePluginGrpc.newBlockingStub(ch)
            .withDeadlineAfter(10, TimeUnit.SECONDS)
            .getDevicePluginOptions(Empty.getDefaultInstance());
      } catch (RuntimeException e) {
        ch.shutdownNow();
        answer.onError(Status.UNKNOWN.withDescription("cannot reach the endpoint").asException());
        return;
      }
      int gen;
      synchronized (EndpointModelKubelet.this) {
        channels.add(ch);
        registrations.add(request.getEndpoint());
        gen = ++generation;
        current = gen;
      }
      answer.onNext(Empty.getDefaultInstance());
      answer.onCompleted();
      Context.ROOT.run(() -> watch(ch, gen, request.getEndpoint()));
    }
  }

  private void watch(ManagedChannel ch, int gen, String endpoint) {
    DevicePluginGrpc.newStub(ch)
        .listAndWatch(
            Empty.getDefaultInstance(),
            new StreamObserver<>() {
              @Override
              public void onNext(ListAndWatchResponse r) {
                boolean healthy =
                    r.getDevicesList().stream().anyMatch(d -> "Healthy".equals(d.getHealth()));
                synchronized (EndpointModelKubelet.this) {
                  if (!streaming.contains(gen)) {
                    streaming.add(gen);
                  }
                  if (healthy && disconnectedSince >= 0 && gen == current) {
                    windows.add(new Window(disconnectedSince, System.nanoTime(), endedStream));
                    disconnectedSince = -1;
                  }
                }
              }

              @Override
              public void onError(Throwable t) {
                ended(endpoint);
              }

              @Override
              public void onCompleted() {
                ended(endpoint);
              }
            });
  }

  private synchronized void ended(String endpoint) {
    if (closed) {
      return;
    }
    disconnects++;
    if (disconnectedSince < 0) {
      disconnectedSince = System.nanoTime();
      endedStream = endpoint;
    }
    current = -1; // the current endpoint is stopped until the next registration
  }

  synchronized List<String> registrations() {
    return List.copyOf(registrations);
  }

  /** When each Register call arrived (System.nanoTime). */
  synchronized List<Long> registerCalls() {
    return List.copyOf(registerCalls);
  }

  /** Waits until the n-th registration's ListAndWatch stream delivered a list. */
  void awaitStreaming(int n, Duration timeout) {
    Awaitility.await().atMost(timeout).until(() -> streamingOf(n));
  }

  private synchronized boolean streamingOf(int n) {
    return streaming.contains(n);
  }

  synchronized List<Window> windows() {
    return List.copyOf(windows);
  }

  synchronized int disconnects() {
    return disconnects;
  }

  /** Whether the resource is disconnected right now. */
  synchronized boolean disconnected() {
    return disconnectedSince >= 0;
  }

  void awaitRegistrations(int n, Duration timeout) {
    Awaitility.await().atMost(timeout).until(() -> registrations().size() >= n);
  }

  @Override
  public void close() throws Exception {
    synchronized (this) {
      closed = true;
    }
    server.shutdownNow();
    List<ManagedChannel> all;
    synchronized (this) {
      all = List.copyOf(channels);
    }
    for (ManagedChannel ch : all) {
      ch.shutdownNow();
    }
    server.awaitTermination(5, TimeUnit.SECONDS);
    for (ManagedChannel ch : all) {
      ch.awaitTermination(5, TimeUnit.SECONDS);
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    Files.deleteIfExists(pluginDir.resolve("kubelet.sock"));
  }
}
