package io.github.deviceplugin4j.docs.host;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.AllocationPolicies;
import io.github.deviceplugin4j.core.Capabilities;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.PluginObserver;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.atomic.LongAdder;

/** The observed, probed host of deploying.md. */
final class ObservedHost {

  private ObservedHost() {}

  /** Counts failed RPCs; a real one would feed a metrics library. */
  static final class FailureCounter implements PluginObserver {
    final LongAdder failures = new LongAdder();

    @Override
    public void onRpc(Rpc rpc) {
      if (!rpc.ok()) {
        failures.increment();
      }
    }
  }

  /** Sees every call of the kubelet before the SDK does. */
  static final class CallLog implements ServerInterceptor {
    final LongAdder calls = new LongAdder();

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
        ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
      calls.increment();
      return next.startCall(call, headers);
    }
  }

  // tag::observed[]
  static DevicePluginHost.Builder observed(
      AccelBackend accel, PluginObserver observer, InetSocketAddress http) {
    return DevicePluginHost.builder()
        // a policy given here, not implemented by the backend (nor lost by a wrapper around it)
        .backend(
            accel,
            Capabilities.builder().preferredAllocator(AllocationPolicies.numaAligned()).build())
        .observer(observer) // every RPC, registration, device list sent, discovery run
        .interceptor(new CallLog()) // gRPC interceptors on the kubelet's calls
        .httpEndpoint(http) // GET /healthz, /readyz (and /metrics with a metricsSource)
        .livenessBound(Duration.ofSeconds(5));
  }
  // end::observed[]
}
