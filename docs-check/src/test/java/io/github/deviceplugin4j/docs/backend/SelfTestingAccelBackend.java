package io.github.deviceplugin4j.docs.backend;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceUnavailableException;
import io.github.deviceplugin4j.core.PreStartHook;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** A {@link PreStartHook} that refuses to start a container on an accelerator that just failed. */
// tag::prestart[]
public class SelfTestingAccelBackend extends AccelBackend implements PreStartHook {

  private final Path root;

  public SelfTestingAccelBackend(Path root) {
    super(root);
    this.root = root;
  }

  @Override
  public void preStart(List<Device> devices) throws IOException {
    for (Device device : devices) {
      Path status = root.resolve("sys/class/accel").resolve(device.id()).resolve("status");
      if (Files.exists(status) && !Files.readString(status).strip().equals("ok")) {
        throw new DeviceUnavailableException(
            device.id()
                + " failed since the last scan (status: "
                + Files.readString(status).strip()
                + "); reset it with 'accelctl reset "
                + device.id()
                + "'",
            List.of(device.id()));
      }
    }
  }
}
// end::prestart[]
