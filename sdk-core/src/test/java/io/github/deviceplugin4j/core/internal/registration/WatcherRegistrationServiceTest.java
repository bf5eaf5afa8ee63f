package io.github.deviceplugin4j.core.internal.registration;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.core.internal.transport.UdsServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import java.net.UnixDomainSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The plugin watcher's registration service answers for any plugin type over a real socket. */
class WatcherRegistrationServiceTest {

  private EventLoopGroup group;
  private Path dir;
  private UdsServer server;
  private ManagedChannel channel;

  @BeforeEach
  void setUp() throws Exception {
    group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    dir = Files.createTempDirectory(Path.of("/tmp"), "wrs");
  }

  @AfterEach
  void tearDown() throws Exception {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (server != null) {
      server.close(2000);
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  private RegistrationGrpc.RegistrationBlockingStub serve(WatcherRegistrationService service)
      throws Exception {
    Path socket = dir.resolve("plugin.sock");
    server =
        UdsServer.start(
            socket,
            PosixFilePermissions.fromString("rw-------"),
            List.of(service.bindService()),
            group,
            null);
    channel =
        NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
            .channelType(NioDomainSocketChannel.class, UnixDomainSocketAddress.class)
            .eventLoopGroup(group)
            .usePlaintext()
            .withOption(ChannelOption.SO_KEEPALIVE, null)
            .build();
    return RegistrationGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  @Test
  void answersGetInfoWithTheInfoOfAnyPluginType_andHandsOnTheKubeletsVerdict() throws Exception {
    PluginInfo dra =
        PluginInfo.newBuilder()
            .setType("DRAPlugin")
            .setName("gpu.example.com")
            .setEndpoint("/var/lib/kubelet/plugins/gpu.example.com/dra.sock")
            .addSupportedVersions("v1.DRAPlugin")
            .addSupportedVersions("v1beta1.DRAPlugin")
            .build();
    AtomicInteger asked = new AtomicInteger();
    List<String> verdicts = new CopyOnWriteArrayList<>();
    var stub =
        serve(
            new WatcherRegistrationService(
                dra, asked::incrementAndGet, (ok, error) -> verdicts.add(ok + ":" + error)));

    PluginInfo answer = stub.getInfo(InfoRequest.getDefaultInstance());
    stub.notifyRegistrationStatus(
        RegistrationStatus.newBuilder().setPluginRegistered(false).setError("bad").build());
    stub.notifyRegistrationStatus(
        RegistrationStatus.newBuilder().setPluginRegistered(true).build());

    assertThat(answer).isEqualTo(dra);
    assertThat(asked).hasValue(1);
    assertThat(verdicts).containsExactly("false:bad", "true:");
  }

  @Test
  void aDevicePluginsInfoNamesTheResourceWithAnEmptyEndpoint() throws Exception {
    var stub =
        serve(
            new WatcherRegistrationService(
                "example.com/accel", List.of("v1beta1"), () -> {}, (ok, error) -> {}));

    PluginInfo answer = stub.getInfo(InfoRequest.getDefaultInstance());

    assertThat(answer.getType()).isEqualTo(WatcherRegistrationService.DEVICE_PLUGIN_TYPE);
    assertThat(answer.getName()).isEqualTo("example.com/accel");
    assertThat(answer.getEndpoint()).isEmpty();
    assertThat(answer.getSupportedVersionsList()).containsExactly("v1beta1");
  }
}
