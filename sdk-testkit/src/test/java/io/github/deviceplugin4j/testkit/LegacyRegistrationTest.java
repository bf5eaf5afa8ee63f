package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.plugin.TestPlugin;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class LegacyRegistrationTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);
  static final String RES = "example.com/foo";

  @TempDir Path dir;
  FakeKubelet kubelet;
  TestPlugin plugin;

  @BeforeEach
  void start() {
    kubelet = FakeKubelet.start(dir);
    plugin = new TestPlugin(RES, dir.resolve("foo.sock")).devices(TestPlugin.healthyDevices(3));
  }

  @AfterEach
  void stop() {
    plugin.close();
    kubelet.close();
    assertThat(kubelet.verifyClosed()).isEmpty();
  }

  @Test
  void registersAndReceivesTheDeviceList() {
    plugin.options(true, true).start().register(kubelet.kubeletSocket());

    Registration r = kubelet.awaitRegistration(RES, WAIT);
    assertThat(r.endpoint()).isEqualTo(dir.resolve("foo.sock").toString());
    assertThat(r.version()).isEqualTo("v1beta1");
    assertThat(r.mode()).isEqualTo(Registration.Mode.LEGACY);
    assertThat(r.preStartRequired()).isTrue();
    assertThat(r.preferredAllocationAvailable()).isTrue();
    List<DeviceState> list = kubelet.awaitDevices(RES, l -> l.size() == 3, WAIT);
    assertThat(list).extracting(DeviceState::id).containsExactly("dev-0", "dev-1", "dev-2");
    assertThat(list.get(1).numaNodes()).containsExactly(1L);
    assertThat(kubelet.capacity(RES)).isEqualTo(3);
    assertThat(kubelet.allocatable(RES)).isEqualTo(3);
    assertThat(kubelet.registration(RES)).contains(r);
    assertThat(kubelet.connectedResources()).containsExactly(RES);
    assertThat(kubelet.registerAttempts())
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.accepted()).isTrue();
              assertThat(a.endpoint()).isEqualTo("foo.sock");
              assertThat(a.optionsSet()).isTrue();
            });
  }

  @Test
  void startCreatesTheDirectoryAndTheKubeletSocketButNoDeprecationFile() {
    // Kubelets v1.26.15 and v1.32.10 write no DEPRECATION file: in
    // pkg/kubelet/cm/devicemanager/manager.go the function that writes it (GetPluginHandler) has
    // no caller. The kubelet's stub plugin skips Register when it finds one.
    assertThat(kubelet.kubeletSocket()).isEqualTo(dir.resolve("kubelet.sock"));
    assertThat(Files.exists(dir.resolve("kubelet.sock"))).isTrue();
    assertThat(dir.resolve("DEPRECATION")).doesNotExist();
    assertThat(kubelet.events()).first().extracting(KubeletEvent::kind).isEqualTo(Kind.START);
  }

  @Test
  void rejectsAnUnsupportedVersionWithTheKubeletsText() {
    plugin.start();
    assertThatThrownBy(() -> plugin.register(kubelet.kubeletSocket(), "v1alpha1", RES, "foo.sock"))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
              assertThat(e.getStatus().getDescription())
                  .isEqualTo(
                      "requested API version \"v1alpha1\" is not supported by kubelet."
                          + " Supported version is [\"v1beta1\"]");
            });
    assertThat(kubelet.registrations()).isEmpty();
    assertThat(kubelet.registerAttempts())
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.accepted()).isFalse();
              assertThat(a.version()).isEqualTo("v1alpha1");
            });
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "no-domain",
        "kubernetes.io/foo",
        "sub.kubernetes.io/foo",
        "requests.example.com/x",
        "Example.com/foo",
        "example.com/-bad",
        "example.com/a/b",
        "example.com/a234567890123456789012345678901234567890123456789012345678901234",
        "/foo",
        "example.com/"
      })
  void rejectsAnInvalidResourceName(String name) {
    plugin.start();
    assertThatThrownBy(() -> plugin.register(kubelet.kubeletSocket(), "v1beta1", name, "foo.sock"))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
              assertThat(e.getStatus().getDescription())
                  .isEqualTo("the ResourceName \"" + name + "\" is invalid");
            });
    assertThat(kubelet.registrations()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "example.com/ok_name.1",
        "example.com/a23456789012345678901234567890123456789012345678901234567890123",
        "a.b-c.example/GPU"
      })
  void acceptsAValidResourceName(String name) {
    plugin.start();
    plugin.register(kubelet.kubeletSocket(), "v1beta1", name, "foo.sock");
    assertThat(kubelet.awaitRegistration(name, WAIT).resourceName()).isEqualTo(name);
  }

  @Test
  void joinsAnAbsoluteEndpointToThePluginDirectoryLikeGo() {
    Path sub = dir.resolve("sub");
    TestPlugin nested = new TestPlugin(RES, sub.resolve("p.sock")).start();
    try {
      // "/sub/p.sock" joined to the plugin directory is dir/sub/p.sock, not /sub/p.sock.
      nested.register(kubelet.kubeletSocket(), "v1beta1", RES, "/sub/p.sock");
      assertThat(kubelet.awaitRegistration(RES, WAIT).endpoint())
          .isEqualTo(sub.resolve("p.sock").toString());
    } finally {
      nested.close();
    }
  }

  @Test
  void anEndpointThatDoesNotServeFailsAfterTheDialTimeout() {
    // Nothing serves missing.sock: the kubelet dials for 10 s, then answers with an error.
    long t0 = System.nanoTime();
    assertThatThrownBy(
            () -> plugin.register(kubelet.kubeletSocket(), "v1beta1", RES, "missing.sock"))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e ->
                assertThat(e.getStatus().getDescription())
                    .isEqualTo("failed to dial device plugin: context deadline exceeded"));
    assertThat(Duration.ofNanos(System.nanoTime() - t0))
        .isGreaterThanOrEqualTo(Duration.ofSeconds(9));
    assertThat(kubelet.events())
        .anyMatch(e -> e.kind() == Kind.ENDPOINT_NOT_READY && e.resource().equals(RES));
  }

  @Test
  void closingWhileARegisterDialsAnswersItBeforeTheEventLoopStops() throws Exception {
    // The Register handler dials for up to 10 s; close() interrupts it, and its answer must still
    // find a running event loop (it used to log a RejectedExecutionException: event executor
    // terminated).
    LogCapture logged = LogCapture.start();
    try {
      CompletableFuture<Throwable> answer = new CompletableFuture<>();
      Thread registering =
          new Thread(
              () -> {
                try {
                  plugin.register(kubelet.kubeletSocket(), "v1beta1", RES, "missing.sock");
                  answer.complete(null);
                } catch (RuntimeException e) {
                  answer.complete(e);
                }
              });
      registering.start();
      kubelet.awaitEvent(e -> e.kind() == Kind.ENDPOINT_NOT_READY, WAIT);
      kubelet.close();
      assertThat(answer.get(30, TimeUnit.SECONDS)).as("Register fails").isNotNull();
      registering.join();
    } finally {
      logged.close();
    }
    assertThat(kubelet.verifyClosed()).isEmpty();
    assertThat(logged.rejectedExecutions())
        .as("records of an executor used after shutdown")
        .isEmpty();
  }

  @Test
  void registeringBeforeServingIsRecordedButTheDialKeepsTrying() throws Exception {
    Thread late =
        new Thread(
            () -> {
              // Serve once the kubelet has noticed the endpoint is not ready.
              kubelet.awaitEvent(e -> e.kind() == Kind.ENDPOINT_NOT_READY, WAIT);
              plugin.start();
            });
    late.start();
    plugin.register(kubelet.kubeletSocket());
    late.join();
    assertThat(kubelet.registration(RES)).isPresent();
    assertThat(kubelet.events()).anyMatch(e -> e.kind() == Kind.ENDPOINT_NOT_READY);
  }

  @Test
  void failingGetDevicePluginOptionsFailsTheRegistrationWithGoStatusText() {
    // PluginConnected (pkg/kubelet/cm/devicemanager/manager.go) wraps grpc-go's status error:
    // "failed to get device plugin options: %v", printed as "rpc error: code = ... desc = ...".
    plugin
        .optionsAnswer(
            e -> {
              throw Status.UNIMPLEMENTED.withDescription("no options").asRuntimeException();
            })
        .start();
    assertThatThrownBy(() -> plugin.register(kubelet.kubeletSocket()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e ->
                assertThat(e.getStatus().getDescription())
                    .isEqualTo(
                        "failed to get device plugin options:"
                            + " rpc error: code = Unimplemented desc = no options"));
    assertThat(kubelet.registrations()).isEmpty();
  }
}
