package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.api.v1beta1.AllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.Mark;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Interceptors added on the builder see, and may refuse, the kubelet's calls. */
class InterceptorTest {

  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String RESOURCE = "example.com/gpu";
  private static final Metadata.Key<String> TENANT =
      Metadata.Key.of("x-tenant", Metadata.ASCII_STRING_MARSHALLER);

  @TempDir Path dir;

  /** Records the calls it sees as "name:method:tenant"; refuses calls of tenant "blocked". */
  static final class Recording implements ServerInterceptor {
    private final String name;
    private final List<String> seen;

    Recording(String name, List<String> seen) {
      this.name = name;
      this.seen = seen;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
        ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
      String tenant = headers.get(TENANT);
      seen.add(name + ":" + call.getMethodDescriptor().getBareMethodName() + ":" + tenant);
      if ("blocked".equals(tenant)) {
        call.close(Status.PERMISSION_DENIED.withDescription("tenant blocked"), new Metadata());
        return new ServerCall.Listener<>() {};
      }
      return next.startCall(call, headers);
    }
  }

  private static AllocateResponse allocate(PluginClient client, String tenant, String id) {
    Metadata headers = new Metadata();
    headers.put(TENANT, tenant);
    return client
        .blocking()
        .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
        .allocate(
            AllocateRequest.newBuilder()
                .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds(id))
                .build());
  }

  @Test
  void interceptorsSeeAllocateHeadersInOrder_andMayRefuseACall_whilePluginKeepsServing()
      throws Exception {
    interceptorsSeeAllocateHeaders();
  }

  private void interceptorsSeeAllocateHeaders() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    try (FakeKubelet kubelet = FakeKubelet.start(dir);
        DevicePluginHost host =
            DevicePluginHost.builder()
                .pluginDir(dir)
                .registrationMode(RegistrationMode.LEGACY)
                .backend(TestBackend.of(RESOURCE, "gpu0", "gpu1"))
                .interceptor(new Recording("first", seen))
                .interceptor(new Recording("second", seen))
                .start();
        PluginClient client = PluginClient.connect(host.status(RESOURCE).socket())) {
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
      // The kubelet's own calls go through them too.
      assertThat(seen).contains("first:GetDevicePluginOptions:null", "first:ListAndWatch:null");
      seen.clear();

      assertThatThrownBy(() -> allocate(client, "blocked", "gpu0"))
          .isInstanceOfSatisfying(
              StatusRuntimeException.class,
              e -> {
                assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.PERMISSION_DENIED);
                assertThat(e.getStatus().getDescription()).isEqualTo("tenant blocked");
              });
      // The first refused it: the second never saw it.
      assertThat(seen).containsExactly("first:Allocate:blocked");

      seen.clear();
      AllocateResponse ok = allocate(client, "team-a", "gpu1");
      assertThat(ok.getContainerResponsesCount()).isEqualTo(1);
      assertThat(seen).containsExactly("first:Allocate:team-a", "second:Allocate:team-a");
      kubelet.allocate(RESOURCE, "gpu0");

      // A kubelet restart: the socket is served again by a new server of the same kind.
      seen.clear();
      Mark restarted = kubelet.restart();
      kubelet.awaitRegistration(RESOURCE, restarted, WAIT);
      kubelet.awaitDevices(RESOURCE, d -> d.size() == 2, WAIT);
      assertThat(kubelet.allocate(RESOURCE, "gpu1").deviceIds()).containsExactly("gpu1");
      assertThat(seen).contains("first:ListAndWatch:null", "second:Allocate:null");
    }
  }
}
