package io.github.deviceplugin4j.docs.host;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.ReadinessFile;
import java.nio.file.Path;
import java.util.List;

/** The {@code main} of deploying.md: a readiness file for the DaemonSet's probe. */
public final class ProductionMain {

  private ProductionMain() {}

  // tag::main[]
  public static void main(String[] args) {
    Path root = Path.of(args.length > 0 ? args[0] : "/host");
    plugin(root, Path.of("/tmp/accel.ready")).run();
  }

  static DevicePluginHost.Builder plugin(Path root, Path readyFile) {
    AccelBackend backend = new AccelBackend(root);
    return DevicePluginHost.builder()
        .backend(backend)
        .listener(new ReadinessFile(readyFile, List.of(backend.resourceName())));
  }
  // end::main[]
}
