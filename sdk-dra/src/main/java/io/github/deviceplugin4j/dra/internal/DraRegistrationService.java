package io.github.deviceplugin4j.dra.internal;

import io.github.deviceplugin4j.api.pluginregistration.InfoRequest;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatusResponse;
import io.github.deviceplugin4j.dra.DraNames;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin watcher's registration service for a DRA driver: {@code PluginInfo{type "DRAPlugin",
 * name <driver>, endpoint <absolute DRA socket>, supported_versions <services>}}, and the kubelet's
 * verdict, logged (with the kubelet's error when it refused).
 */
public final class DraRegistrationService extends RegistrationGrpc.RegistrationImplBase {

  private static final Logger LOG = LoggerFactory.getLogger(DraRegistrationService.class);

  private final PluginInfo info;
  private final AtomicReference<RegistrationStatus> status = new AtomicReference<>();

  /**
   * The service of one driver.
   *
   * @param driverName the driver's name
   * @param endpoint the DRA socket, absolute
   * @param services the gRPC services the driver serves, DRAPlugin newest first
   */
  public DraRegistrationService(String driverName, Path endpoint, List<String> services) {
    this.info =
        PluginInfo.newBuilder()
            .setType(DraNames.PLUGIN_TYPE)
            .setName(driverName)
            .setEndpoint(endpoint.toAbsolutePath().toString())
            .addAllSupportedVersions(services)
            .build();
  }

  @Override
  public void getInfo(InfoRequest request, StreamObserver<PluginInfo> out) {
    out.onNext(info);
    out.onCompleted();
  }

  @Override
  public void notifyRegistrationStatus(
      RegistrationStatus request, StreamObserver<RegistrationStatusResponse> out) {
    status.set(request);
    if (request.getPluginRegistered()) {
      LOG.info("The kubelet registered DRA driver {} at {}", info.getName(), info.getEndpoint());
    } else {
      LOG.error("The kubelet refused DRA driver {}: {}", info.getName(), request.getError());
    }
    out.onNext(RegistrationStatusResponse.getDefaultInstance());
    out.onCompleted();
  }

  /**
   * The kubelet's last verdict.
   *
   * @return the status, null before the first
   */
  public RegistrationStatus lastStatus() {
    return status.get();
  }

  /**
   * What GetInfo answers.
   *
   * @return the plugin info
   */
  public PluginInfo info() {
    return info;
  }
}
