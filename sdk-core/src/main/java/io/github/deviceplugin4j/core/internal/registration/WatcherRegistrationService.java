package io.github.deviceplugin4j.core.internal.registration;

import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatusResponse;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * The plugin watcher's registration service ({@code pluginregistration.Registration}), served by a
 * plugin on its socket in the kubelet's {@code plugins_registry} directory: it answers {@code
 * GetInfo} with a fixed {@link PluginInfo} and hands on the kubelet's {@code
 * NotifyRegistrationStatus}. Any plugin type works ({@code DevicePlugin}, {@code DRAPlugin}, ...).
 *
 * <p>For a device plugin the endpoint is left empty: the kubelet then uses the path at which it
 * found this socket, which also serves the DevicePlugin service. This works whatever path the
 * plugin's container mounts the registry directory at.
 *
 * <pre>{@code
 * PluginInfo info = PluginInfo.newBuilder().setType("DRAPlugin").setName("gpu.example.com")
 *     .setEndpoint("/var/lib/kubelet/plugins/gpu.example.com/dra.sock")
 *     .addSupportedVersions("v1.DRAPlugin").build();
 * ServerServiceDefinition service =
 *     new WatcherRegistrationService(info, () -> {}, (ok, error) -> log(ok, error)).bindService();
 * }</pre>
 */
public final class WatcherRegistrationService extends RegistrationGrpc.RegistrationImplBase {

  /** The plugin type the kubelet's device manager handles. */
  public static final String DEVICE_PLUGIN_TYPE = "DevicePlugin";

  private final PluginInfo info;
  private final Runnable onGetInfo;
  private final BiConsumer<Boolean, String> onStatus;

  /**
   * The service for any plugin type: {@code GetInfo} answers {@code info}, after running {@code
   * onGetInfo}; {@code onStatus} gets each {@code NotifyRegistrationStatus}: registered, and the
   * kubelet's error text (empty when none). Both run on a gRPC thread.
   */
  public WatcherRegistrationService(
      PluginInfo info, Runnable onGetInfo, BiConsumer<Boolean, String> onStatus) {
    this.info = Objects.requireNonNull(info, "info");
    this.onGetInfo = Objects.requireNonNull(onGetInfo, "onGetInfo");
    this.onStatus = Objects.requireNonNull(onStatus, "onStatus");
  }

  /** A device plugin's service: type {@value #DEVICE_PLUGIN_TYPE}, empty endpoint. */
  WatcherRegistrationService(
      String resourceName,
      List<String> versions,
      Runnable onGetInfo,
      BiConsumer<Boolean, String> onStatus) {
    this(
        PluginInfo.newBuilder()
            .setType(DEVICE_PLUGIN_TYPE)
            .setName(resourceName)
            .setEndpoint("")
            .addAllSupportedVersions(versions)
            .build(),
        onGetInfo,
        onStatus);
  }

  /** Answers the plugin info. */
  @Override
  public void getInfo(InfoRequest request, StreamObserver<PluginInfo> out) {
    onGetInfo.run();
    out.onNext(info);
    out.onCompleted();
  }

  /** Hands on the kubelet's verdict. */
  @Override
  public void notifyRegistrationStatus(
      RegistrationStatus request, StreamObserver<RegistrationStatusResponse> out) {
    onStatus.accept(request.getPluginRegistered(), request.getError());
    out.onNext(RegistrationStatusResponse.getDefaultInstance());
    out.onCompleted();
  }
}
