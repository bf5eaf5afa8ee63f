package io.github.deviceplugin4j.reliability;

import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.examples.fixtures.DflFixture;
import io.github.deviceplugin4j.examples.fixtures.InfinibandFixture;
import io.github.deviceplugin4j.examples.fixtures.SriovFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import io.github.deviceplugin4j.examples.fpga.FpgaBackend;
import io.github.deviceplugin4j.examples.fpga.FpgaConfig;
import io.github.deviceplugin4j.examples.infiniband.InfinibandBackend;
import io.github.deviceplugin4j.examples.infiniband.InfinibandConfig;
import io.github.deviceplugin4j.examples.nic.NicBackend;
import io.github.deviceplugin4j.examples.nic.NicConfig;
import io.github.deviceplugin4j.examples.nic.NicPool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A simulated node for the example plugins (sysfs/devfs fixture trees as in the demo), their
 * in-process backends, and the command lines of their runnable jars.
 */
final class ExampleNode {
  static final String AFU = "d8424dc4a4a3c413f89e433683f9040b";
  static final String FPGA_RESOURCE = "fpga.example.com/af-" + AFU;
  static final String NIC_RESOURCE = "nic.example.com/sriov_net";
  static final String IB_RESOURCE = "rdma.example.com/hca";

  final Path root;
  final Path work;
  final Path devinfo;

  ExampleNode(Path work) {
    this.work = work;
    this.root = work.resolve("root");
    this.devinfo = work.resolve("devinfo");
    SysfsTree tree = SysfsTree.create(root);
    DflFixture fpga = new DflFixture(tree);
    int r0 = fpga.card("0000:5e:00.0", 0, "69528db6eb31577a8c3668f9faa081f6");
    fpga.port(r0, 0, AFU);
    fpga.port(r0, 1, AFU);
    SriovFixture nic = new SriovFixture(tree);
    nic.physicalFunction("ens1f0", "0000:3b:00.0", 0, "0x8086", "0x1592", "ice");
    nic.virtualFunctions("ens1f0", 4, "0x1889", "iavf");
    InfinibandFixture ib = new InfinibandFixture(tree);
    ib.hca("mlx5_0", "0000:17:00.0", 0, 1);
    ib.hca("mlx5_1", "0000:b1:00.0", 1, 1);
  }

  /** Every example backend on this node. */
  List<DeviceBackend> backends() {
    Duration poll = Duration.ofMillis(500);
    List<DeviceBackend> list = new ArrayList<>();
    FpgaConfig fpga =
        new FpgaConfig(root, FpgaConfig.Mode.AF, "fpga.example.com", poll, work.resolve("f.ready"));
    list.addAll(FpgaBackend.discover(fpga));
    NicConfig nic =
        new NicConfig(
            root,
            "nic.example.com",
            List.of(
                new NicPool("sriov_net", List.of("ens1f0"), List.of("8086"), List.of(), List.of())),
            devinfo,
            poll,
            work.resolve("n.ready"));
    list.add(new NicBackend(nic, nic.pools().get(0)));
    list.add(new InfinibandBackend(InfinibandConfig.exclusive(root).withPollInterval(poll)));
    return list;
  }

  /** An example plugin's runnable jar and its arguments on this node. */
  enum Plugin {
    FPGA("fpga", "deviceplugin4j-example-fpga", FPGA_RESOURCE),
    NIC("nic", "deviceplugin4j-example-nic", NIC_RESOURCE),
    INFINIBAND("infiniband", "deviceplugin4j-example-infiniband", IB_RESOURCE);

    final String module;
    final String artifactId;
    final String resource;

    Plugin(String module, String artifactId, String resource) {
      this.module = module;
      this.artifactId = artifactId;
      this.resource = resource;
    }

    /** The shaded jar the examples build at package: examples/x/target/artifactId.jar. */
    Path jar() {
      String dir = System.getProperty("reliability.examplesDir");
      Path examples = dir == null ? Path.of("..", "examples") : Path.of(dir);
      Path jar = examples.resolve(module).resolve("target").resolve(artifactId + ".jar");
      if (!Files.isRegularFile(jar)) {
        throw new IllegalStateException(
            jar.toAbsolutePath().normalize()
                + " is missing: build the examples first (./mvnw -B -q install -DskipTests)");
      }
      return jar.toAbsolutePath().normalize();
    }
  }

  /** The command line starting a plugin's jar against this node. */
  List<String> command(Plugin plugin) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-jar");
    cmd.add(plugin.jar().toString());
    cmd.add("--root=" + root);
    cmd.add("--ready-file=" + work.resolve(plugin.module + ".ready"));
    switch (plugin) {
      case NIC -> {
        cmd.add("--devinfo-dir=" + devinfo);
        cmd.add("--config=" + writeNicConfig());
      }
      case INFINIBAND, FPGA -> {}
    }
    return cmd;
  }

  private Path writeNicConfig() {
    Path file = work.resolve("nic.properties");
    try {
      Files.writeString(file, "pool.sriov_net.pf-names=ens1f0\npool.sriov_net.vendors=8086\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return file;
  }

  /** Starts a plugin process in legacy mode on a plugin directory. */
  Process start(Plugin plugin, Path pluginDir, Path log) {
    return start(plugin, pluginDir, work.resolve("no-registry"), log);
  }

  /**
   * Starts a plugin process in its default (AUTO) registration mode: plugin watcher mode when the
   * registry directory exists.
   */
  Process start(Plugin plugin, Path pluginDir, Path registryDir, Path log) {
    ProcessBuilder pb = new ProcessBuilder(command(plugin));
    pb.environment().put("DEVICE_PLUGIN_DIR", pluginDir.toString());
    pb.environment().put("PLUGINS_REGISTRY_DIR", registryDir.toString());
    pb.redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    try {
      return pb.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + plugin.jar(), e);
    }
  }
}
