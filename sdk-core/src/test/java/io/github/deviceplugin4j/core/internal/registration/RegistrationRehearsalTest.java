package io.github.deviceplugin4j.core.internal.registration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.v1beta1.DevicePluginGrpc;
import io.github.deviceplugin4j.api.v1beta1.DevicePluginOptions;
import io.github.deviceplugin4j.api.v1beta1.Empty;
import io.github.deviceplugin4j.api.v1beta1.ListAndWatchResponse;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.core.internal.Listeners;
import io.github.deviceplugin4j.core.internal.Observers;
import io.github.deviceplugin4j.core.internal.config.EngineConfig;
import io.github.deviceplugin4j.core.internal.config.Shared;
import io.github.deviceplugin4j.core.internal.requests.RequestDeadlines;
import io.github.deviceplugin4j.core.internal.requests.V1Beta1Adapter;
import io.github.deviceplugin4j.core.internal.transport.UdsServer;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rehearsal of a registration at start: the plugin's Register client, to a private kubelet-like
 * server that dials the plugin's private server back as the kubelet does (options, then the first
 * ListAndWatch list, then the stream cancelled), over real Unix sockets; nothing is left in the
 * plugin directory.
 */
class RegistrationRehearsalTest {

  @TempDir Path tmp;

  final EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
  final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
  final ExecutorService workers = Executors.newSingleThreadExecutor();
  final List<String> calls = new CopyOnWriteArrayList<>();
  Shared shared;
  Path pluginDir;

  @BeforeEach
  void setUp() throws Exception {
    pluginDir = Files.createDirectories(tmp.resolve("dp"));
    EngineConfig config =
        new EngineConfig(
            List.of(),
            pluginDir,
            tmp.resolve("reg"),
            RegistrationMode.LEGACY,
            PosixFilePermissions.fromString("rw-------"),
            List.of(),
            Duration.ofSeconds(10),
            List.of(new V1Beta1Adapter("v1beta1")),
            Duration.ofSeconds(5),
            Duration.ofMillis(100),
            Duration.ofSeconds(1),
            Duration.ofSeconds(5),
            Duration.ofSeconds(5),
            Duration.ofSeconds(5),
            Duration.ofSeconds(5),
            Duration.ofMillis(20),
            4 * 1024 * 1024,
            1,
            RequestDeadlines.DEFAULTS,
            EngineConfig.Hooks.NONE);
    shared = new Shared(config, group, workers, timer, new Listeners(List.of()), Observers.NONE);
  }

  @AfterEach
  void tearDown() throws Exception {
    timer.shutdownNow();
    workers.shutdownNow();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  /** The plugin's side: records the kubelet-like calls; {@code options} answers them or not. */
  UdsServer.Standby plugin(Status options) throws Exception {
    DevicePluginGrpc.DevicePluginImplBase service =
        new DevicePluginGrpc.DevicePluginImplBase() {
          @Override
          public void getDevicePluginOptions(
              Empty request, StreamObserver<DevicePluginOptions> answer) {
            calls.add("GetDevicePluginOptions");
            if (options.isOk()) {
              answer.onNext(DevicePluginOptions.getDefaultInstance());
              answer.onCompleted();
            } else {
              answer.onError(options.asRuntimeException());
            }
          }

          @Override
          public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> out) {
            calls.add("ListAndWatch");
            ((ServerCallStreamObserver<ListAndWatchResponse>) out)
                .setOnCancelHandler(() -> calls.add("ListAndWatch cancelled"));
            out.onNext(ListAndWatchResponse.getDefaultInstance());
          }
        };
    return UdsServer.bind(
        pluginDir,
        PosixFilePermissions.fromString("rw-------"),
        List.of(service.bindService()),
        group);
  }

  @Test
  void registersWithAPrivateKubeletThatDialsThePluginBackAsTheKubeletDoes() throws Exception {
    UdsServer.Standby plugin = plugin(Status.OK);
    try {
      boolean ok =
          RegistrationRehearsal.run(
              shared, "example.com/dev", plugin.path(), true, false, TimeUnit.SECONDS.toNanos(30));

      assertThat(ok).isTrue();
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () ->
                  assertThat(calls)
                      .containsExactly(
                          "GetDevicePluginOptions", "ListAndWatch", "ListAndWatch cancelled"));
    } finally {
      plugin.discard();
    }
    try (Stream<Path> left = Files.list(pluginDir)) {
      assertThat(left).as("left in the plugin directory").isEmpty();
    }
  }

  @Test
  void aDialBackThatFails_failsTheRehearsal() throws Exception {
    UdsServer.Standby plugin = plugin(Status.UNAVAILABLE.withDescription("not today"));
    try {
      boolean ok =
          RegistrationRehearsal.run(
              shared, "example.com/dev", plugin.path(), false, false, TimeUnit.SECONDS.toNanos(30));

      assertThat(ok).isFalse();
      assertThat(calls).containsExactly("GetDevicePluginOptions");
    } finally {
      plugin.discard();
    }
  }
}
