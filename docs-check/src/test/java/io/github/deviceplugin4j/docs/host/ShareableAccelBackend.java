package io.github.deviceplugin4j.docs.host;

import com.example.accel.AccelBackend;
import io.github.deviceplugin4j.core.Device;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** A second resource from the same hardware: each accelerator as N shareable slots. */
public class ShareableAccelBackend extends AccelBackend {

  private final int slots;

  /**
   * A shared view of the accelerators.
   *
   * @param root the node's root
   * @param slots containers per accelerator
   */
  public ShareableAccelBackend(Path root, int slots) {
    super(root);
    this.slots = slots;
  }

  @Override
  public String resourceName() {
    return "example.com/accel-shared";
  }

  @Override
  public List<Device> devices() throws IOException {
    List<Device> out = new ArrayList<>();
    for (Device accel : super.devices()) {
      for (int i = 0; i < slots; i++) {
        out.add(
            new Device(
                accel.id() + "-slot" + i, accel.health(), accel.numaNodes(), accel.allocation()));
      }
    }
    return out;
  }
}
