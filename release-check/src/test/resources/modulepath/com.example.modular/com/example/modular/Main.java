package com.example.modular;

import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** A plugin in a named module: registers with a fake kubelet, then says where everything came from. */
public final class Main implements DeviceBackend {

  @Override
  public String resourceName() {
    return "example.com/modular";
  }

  @Override
  public List<Device> devices() {
    return List.of(Device.builder("dev0").build());
  }

  public static void main(String[] args) {
    Path pluginDir = Path.of(args[0]);
    try (FakeKubelet kubelet = FakeKubelet.start(pluginDir);
        DevicePluginHost host =
            DevicePluginHost.builder()
                .pluginDir(pluginDir)
                .registrationMode(RegistrationMode.LEGACY)
                .backend(new Main())
                .start()) {
      kubelet.awaitDevices("example.com/modular", devices -> devices.size() == 1, Duration.ofSeconds(30));
      System.out.println(
          "registered: plugin module "
              + Main.class.getModule().getName()
              + ", SDK module "
              + DevicePluginHost.class.getModule().getName()
              + ", jdk.unsupported "
              + (ModuleLayer.boot().findModule("jdk.unsupported").isPresent() ? "present" : "absent"));
    }
  }
}
