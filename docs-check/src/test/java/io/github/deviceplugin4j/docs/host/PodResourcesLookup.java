package io.github.deviceplugin4j.docs.host;

import io.github.deviceplugin4j.core.podresources.DeviceOwner;
import io.github.deviceplugin4j.core.podresources.PodResourcesClient;
import java.nio.file.Path;
import java.util.Optional;

/** Which pod holds a device, from the kubelet's PodResources API. */
public final class PodResourcesLookup {

  private PodResourcesLookup() {}

  // tag::owner[]
  static String describe(Path podResourcesSocket, String resource, String deviceId) {
    try (PodResourcesClient client = PodResourcesClient.connect(podResourcesSocket)) {
      Optional<DeviceOwner> owner = client.ownerOf(resource, deviceId);
      return owner
          .map(
              o ->
                  deviceId
                      + " is used by "
                      + o.namespace()
                      + "/"
                      + o.podName()
                      + " ("
                      + o.containerName()
                      + ")")
          .orElse(deviceId + " is free");
    }
  }
  // end::owner[]
}
