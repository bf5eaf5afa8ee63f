package io.github.deviceplugin4j.testkit.plugin;

import io.github.deviceplugin4j.api.dra.v1.Claim;
import io.github.deviceplugin4j.api.dra.v1.DRAPluginGrpc;
import io.github.deviceplugin4j.api.dra.v1.Device;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourceResponse;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesRequest;
import io.github.deviceplugin4j.api.dra.v1.NodePrepareResourcesResponse;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourceResponse;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesRequest;
import io.github.deviceplugin4j.api.dra.v1.NodeUnprepareResourcesResponse;
import io.github.deviceplugin4j.api.drahealth.v1alpha1.DRAResourceHealthGrpc;
import io.github.deviceplugin4j.api.drahealth.v1alpha1.DeviceHealth;
import io.github.deviceplugin4j.api.drahealth.v1alpha1.DeviceIdentifier;
import io.github.deviceplugin4j.api.drahealth.v1alpha1.HealthStatus;
import io.github.deviceplugin4j.api.drahealth.v1alpha1.NodeWatchResourcesRequest;
import io.github.deviceplugin4j.api.drahealth.v1alpha1.NodeWatchResourcesResponse;
import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatusResponse;
import io.github.deviceplugin4j.testkit.DraKubelet;
import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A tiny DRA driver written against the raw gRPC API (no SDK): serves {@code DRAPlugin} v1 and,
 * optionally, {@code v1alpha1.DRAResourceHealth} on its DRA socket, and {@code
 * pluginregistration.Registration} on a registry socket. Each claim gets one device {@code
 * dev-<claim name>} in pool {@code node-a}; claims named {@code fail-*} get a per-claim error,
 * claims named {@code skip-*} are left out of the answer.
 */
public final class TestDraDriver implements AutoCloseable {
  private final String driver;
  private final Path draSocket;
  private final Path registrySocket;
  private final UdsTransport transport = new UdsTransport("test-dra-driver");
  private PluginInfo info;
  private boolean health = true;
  private volatile boolean skipAll;
  private Server draServer;
  private Server registryServer;

  /** What NotifyRegistrationStatus told the driver. */
  public final BlockingQueue<RegistrationStatus> statuses = new LinkedBlockingQueue<>();

  /** The claims prepared now, by UID. */
  public final Set<String> prepared = ConcurrentHashMap.newKeySet();

  /** NodePrepareResources calls received. */
  public final AtomicInteger prepareCalls = new AtomicInteger();

  private final List<StreamObserver<NodeWatchResourcesResponse>> watchers =
      new CopyOnWriteArrayList<>();
  private final Map<String, DeviceHealth> deviceHealth = new ConcurrentHashMap<>();

  /**
   * A driver with a valid PluginInfo for both DRA service versions.
   *
   * @param driver the driver name
   * @param draSocket the DRA socket
   * @param registrySocket the registration socket in the registry directory
   */
  public TestDraDriver(String driver, Path draSocket, Path registrySocket) {
    this.driver = driver;
    this.draSocket = draSocket;
    this.registrySocket = registrySocket;
    this.info =
        PluginInfo.newBuilder()
            .setType("DRAPlugin")
            .setName(driver)
            .setEndpoint(draSocket.toString())
            .addSupportedVersions(DraKubelet.V1_SERVICE)
            .addSupportedVersions(DraKubelet.V1BETA1_SERVICE)
            .build();
  }

  /** Replaces the PluginInfo the registration socket answers. */
  public TestDraDriver pluginInfo(PluginInfo info) {
    this.info = info;
    return this;
  }

  /** Whether to serve the health service (UNIMPLEMENTED otherwise). */
  public TestDraDriver health(boolean serve) {
    this.health = serve;
    return this;
  }

  /** Whether prepare leaves every claim out of its answer (a broken driver). */
  public TestDraDriver skipAll(boolean skip) {
    this.skipAll = skip;
    return this;
  }

  /** Serves the DRA socket, then the registration socket. */
  public TestDraDriver start() throws IOException {
    Files.createDirectories(draSocket.getParent());
    Files.createDirectories(registrySocket.getParent());
    List<BindableService> services = new ArrayList<>();
    services.add(new Dra());
    if (health) {
      services.add(new Health());
    }
    draServer = transport.startServer(draSocket, services.toArray(BindableService[]::new));
    registryServer = transport.startServer(registrySocket, new Registration());
    return this;
  }

  /** Reports a device's health to every open NodeWatchResources stream. */
  public synchronized void setHealth(String device, HealthStatus status, String message) {
    deviceHealth.put(
        device,
        DeviceHealth.newBuilder()
            .setDevice(DeviceIdentifier.newBuilder().setPoolName("node-a").setDeviceName(device))
            .setHealth(status)
            .setMessage(message)
            .setLastUpdatedTime(System.currentTimeMillis() / 1000)
            .build());
    NodeWatchResourcesResponse m = snapshot();
    for (StreamObserver<NodeWatchResourcesResponse> w : watchers) {
      synchronized (w) {
        w.onNext(m);
      }
    }
  }

  private NodeWatchResourcesResponse snapshot() {
    return NodeWatchResourcesResponse.newBuilder().addAllDevices(deviceHealth.values()).build();
  }

  /** The registration socket. */
  public Path registrySocket() {
    return registrySocket;
  }

  @Override
  public void close() throws IOException {
    for (StreamObserver<NodeWatchResourcesResponse> w : watchers) {
      synchronized (w) {
        w.onCompleted();
      }
    }
    if (registryServer != null) {
      registryServer.shutdownNow();
    }
    if (draServer != null) {
      draServer.shutdownNow();
    }
    transport.close();
    Files.deleteIfExists(registrySocket);
    Files.deleteIfExists(draSocket);
  }

  private final class Dra extends DRAPluginGrpc.DRAPluginImplBase {
    @Override
    public void nodePrepareResources(
        NodePrepareResourcesRequest request, StreamObserver<NodePrepareResourcesResponse> out) {
      prepareCalls.incrementAndGet();
      NodePrepareResourcesResponse.Builder b = NodePrepareResourcesResponse.newBuilder();
      for (Claim c : request.getClaimsList()) {
        if (skipAll || c.getName().startsWith("skip-")) {
          continue;
        }
        if (c.getName().startsWith("fail-")) {
          b.putClaims(
              c.getUid(),
              NodePrepareResourceResponse.newBuilder()
                  .setError("claim " + c.getName() + " cannot be prepared")
                  .build());
          continue;
        }
        prepared.add(c.getUid());
        b.putClaims(
            c.getUid(),
            NodePrepareResourceResponse.newBuilder()
                .addDevices(
                    Device.newBuilder()
                        .addRequestNames("req")
                        .setPoolName("node-a")
                        .setDeviceName("dev-" + c.getName())
                        .addCdiDeviceIds("example.com/dev=" + c.getName()))
                .build());
      }
      out.onNext(b.build());
      out.onCompleted();
    }

    @Override
    public void nodeUnprepareResources(
        NodeUnprepareResourcesRequest request, StreamObserver<NodeUnprepareResourcesResponse> out) {
      NodeUnprepareResourcesResponse.Builder b = NodeUnprepareResourcesResponse.newBuilder();
      for (Claim c : request.getClaimsList()) {
        prepared.remove(c.getUid());
        b.putClaims(c.getUid(), NodeUnprepareResourceResponse.getDefaultInstance());
      }
      out.onNext(b.build());
      out.onCompleted();
    }
  }

  private final class Health extends DRAResourceHealthGrpc.DRAResourceHealthImplBase {
    @Override
    public void nodeWatchResources(
        NodeWatchResourcesRequest request, StreamObserver<NodeWatchResourcesResponse> out) {
      // The stream is known before its first list goes out, under the lock setHealth holds: a
      // change made meanwhile is in that list or sent after it, never lost between the two.
      synchronized (TestDraDriver.this) {
        watchers.add(out);
        synchronized (out) {
          out.onNext(snapshot());
        }
      }
    }
  }

  private final class Registration extends RegistrationGrpc.RegistrationImplBase {
    @Override
    public void getInfo(InfoRequest request, StreamObserver<PluginInfo> out) {
      out.onNext(info);
      out.onCompleted();
    }

    @Override
    public void notifyRegistrationStatus(
        RegistrationStatus request, StreamObserver<RegistrationStatusResponse> out) {
      statuses.add(request);
      out.onNext(RegistrationStatusResponse.getDefaultInstance());
      out.onCompleted();
    }
  }

  @Override
  public String toString() {
    return "TestDraDriver " + driver + " at " + draSocket;
  }
}
