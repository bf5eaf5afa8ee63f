package io.github.deviceplugin4j.benchmarks.process;

import io.github.deviceplugin4j.examples.fixtures.DflFixture;
import io.github.deviceplugin4j.examples.fixtures.SysfsTree;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * A simulated node with one DFL FPGA card and two ports carrying the same accelerator, as the
 * reliability suite and the demo build it, and the FPGA example's command line against it: one
 * resource with two devices. The plugin runs in legacy mode ({@code PLUGINS_REGISTRY_DIR} names a
 * directory that does not exist) or, given the kubelet's plugins registry directory, in
 * plugin-watcher mode, as a DaemonSet that mounts it does.
 */
final class FpgaNode {

  /** The accelerator function ID of both ports. */
  static final String AFU = "d8424dc4a4a3c413f89e433683f9040b";

  /** The resource the plugin serves. */
  static final String RESOURCE = "fpga.example.com/af-" + AFU;

  private final Path work;
  private final Path root;
  private final Path jar;

  /**
   * Writes the tree.
   *
   * @param work an empty directory, short (sockets go below it)
   * @param jar the FPGA example's runnable jar
   */
  FpgaNode(Path work, Path jar) {
    this.work = work;
    this.root = work.resolve("root");
    this.jar = jar;
    SysfsTree tree = SysfsTree.create(root);
    DflFixture fpga = new DflFixture(tree);
    int region = fpga.card("0000:5e:00.0", 0, "69528db6eb31577a8c3668f9faa081f6");
    fpga.port(region, 0, AFU);
    fpga.port(region, 1, AFU);
  }

  Path jar() {
    return jar;
  }

  /**
   * Starts the plugin.
   *
   * @param flags JVM flags
   * @param pluginDir the kubelet's plugin directory
   * @param registryDir the kubelet's plugins registry directory (plugin-watcher mode), or null for
   *     legacy mode
   * @param runDir where its readiness file and log go
   * @return the process
   */
  JavaProcess start(JvmFlags.FlagSet flags, Path pluginDir, Path registryDir, Path runDir) {
    Path registry = registryDir == null ? work.resolve("no-registry") : registryDir;
    return JavaProcess.start(
        flags,
        List.of(
            "-jar", jar.toString(), "--root=" + root, "--ready-file=" + runDir.resolve("ready")),
        Map.of(
            "DEVICE_PLUGIN_DIR", pluginDir.toString(), "PLUGINS_REGISTRY_DIR", registry.toString()),
        runDir.resolve("plugin.log"));
  }
}
