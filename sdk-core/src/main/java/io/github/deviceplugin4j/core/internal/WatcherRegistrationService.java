package io.github.deviceplugin4j.core.internal;

import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatusResponse;
import io.grpc.stub.StreamObserver;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * The plugin watcher's registration service ({@code pluginregistration.Registration}) for one
 * resource. The endpoint is left empty: the kubelet then uses the path at which it found this
 * socket, which also serves the DevicePlugin service. This works whatever path the plugin's
 * container mounts the registry directory at.
 */
final class WatcherRegistrationService extends RegistrationGrpc.RegistrationImplBase {

  /** The plugin type the kubelet's device manager handles. */
  static final String DEVICE_PLUGIN_TYPE = "DevicePlugin";

  private final String resourceName;
  private final List<String> versions;
  private final Runnable onGetInfo;
  private final BiConsumer<Boolean, String> onStatus;

  WatcherRegistrationService(
      String resourceName,
      List<String> versions,
      Runnable onGetInfo,
      BiConsumer<Boolean, String> onStatus) {
    this.resourceName = resourceName;
    this.versions = List.copyOf(versions);
    this.onGetInfo = onGetInfo;
    this.onStatus = onStatus;
  }

  @Override
  public void getInfo(InfoRequest request, StreamObserver<PluginInfo> out) {
    onGetInfo.run();
    out.onNext(
        PluginInfo.newBuilder()
            .setType(DEVICE_PLUGIN_TYPE)
            .setName(resourceName)
            .setEndpoint("")
            .addAllSupportedVersions(versions)
            .build());
    out.onCompleted();
  }

  @Override
  public void notifyRegistrationStatus(
      RegistrationStatus request, StreamObserver<RegistrationStatusResponse> out) {
    onStatus.accept(request.getPluginRegistered(), request.getError());
    out.onNext(RegistrationStatusResponse.getDefaultInstance());
    out.onCompleted();
  }
}
