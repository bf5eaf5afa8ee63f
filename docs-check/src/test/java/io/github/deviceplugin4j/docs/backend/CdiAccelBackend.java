package io.github.deviceplugin4j.docs.backend;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.cdi.CdiSpec;
import io.github.deviceplugin4j.cdi.CdiSpecDirectory;
import io.github.deviceplugin4j.core.Device;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** Hands devices to containers through CDI: writes the spec, advertises the CDI names. */
// tag::cdi[]
public class CdiAccelBackend extends AccelBackend {

  private final CdiSpecDirectory cdi;

  public CdiAccelBackend(Path root, CdiSpecDirectory cdi) {
    super(root);
    this.cdi = cdi;
  }

  @Override
  public List<Device> devices() throws IOException {
    List<Device> devices = super.devices();
    CdiSpec spec = CdiSpec.fromDevices("example.com/accel", devices);
    cdi.write(spec); // atomically replaces /var/run/cdi/example.com-accel.json
    return spec.referencing(devices); // each device's allocation is now its CDI name
  }

  @Override
  public void stop() {
    try {
      cdi.remove("example.com/accel");
    } catch (IOException e) {
      // the runtime ignores a spec whose devices are no longer advertised
    }
  }
}
// end::cdi[]
