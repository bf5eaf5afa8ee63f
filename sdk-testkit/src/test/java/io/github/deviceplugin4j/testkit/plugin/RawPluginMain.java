package io.github.deviceplugin4j.testkit.plugin;

import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.v1beta1.AllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateRequest;
import io.github.deviceplugin4j.api.v1beta1.ContainerAllocateResponse;
import io.github.deviceplugin4j.api.v1beta1.Device;
import io.github.deviceplugin4j.api.v1beta1.DeviceSpec;
import io.grpc.Status;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The test plugin as a program, run in its own JVM by the conformance tests: raw grpc-java, no SDK.
 * Reads {@code DEVICE_PLUGIN_DIR} (and {@code PLUGINS_REGISTRY_DIR} for plugin-watcher mode),
 * registers, re-registers when {@code kubelet.sock} is created again, and removes its socket on
 * SIGTERM. {@code --devices N} sets how many devices it lists (4); {@code --unhealthy K} makes the
 * last K of them Unhealthy and {@code Allocate} refuse them (and unknown IDs) with
 * FAILED_PRECONDITION. {@code --break MODE} makes it misbehave in one way, so each conformance
 * check can be shown to fail:
 *
 * <ul>
 *   <li>{@code register-before-serving}: calls Register before it serves: the socket accepts the
 *       kubelet's first connection and closes it, then the plugin serves (so the kubelet's first
 *       dial fails however slow the machine is, and its retry succeeds)
 *   <li>{@code bad-register-first}: first registers with version v1alpha1, then correctly
 *   <li>{@code options-error}: GetDevicePluginOptions fails (and so Register; it then exits 1)
 *   <li>{@code slow-initial-list}: sends the first device list after 1.5 s
 *   <li>{@code duplicate-ids}: the device list repeats an ID
 *   <li>{@code bad-allocate-response}: relative paths, bad permissions, bad env name, bad CDI name
 *   <li>{@code accept-unknown-ids}: Allocate does not check the IDs
 *   <li>{@code die-on-cancel}: exits when the kubelet cancels its stream
 *   <li>{@code no-reregister}: ignores kubelet restarts
 *   <li>{@code oversize-list}: advertises a device list over 4 MiB
 *   <li>{@code keep-socket-on-sigterm}: leaves its socket behind
 * </ul>
 *
 * <p>{@code --re-register-delay-ms N} makes it register again only N ms after a kubelet restart
 * (like a plugin that polls its socket and retries on a fixed timer, e.g. squat's
 * generic-device-plugin: 5.5-6 s). {@code --also NAME} serves and registers a second resource with
 * the same devices on {@code raw-also.sock}.
 */
public final class RawPluginMain {
  private RawPluginMain() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> o = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      o.put(args[i], args[i + 1]);
    }
    String resource = o.getOrDefault("--resource", "example.com/raw");
    int count = Integer.parseInt(o.getOrDefault("--devices", "4"));
    String mode = o.getOrDefault("--break", "none");
    long reRegisterDelayMillis = Long.parseLong(o.getOrDefault("--re-register-delay-ms", "0"));
    String also = o.get("--also");
    Path dir = Path.of(o.getOrDefault("--dir", System.getenv("DEVICE_PLUGIN_DIR")));
    String registryEnv = System.getenv("PLUGINS_REGISTRY_DIR");
    boolean watcher = registryEnv != null && !registryEnv.isEmpty();
    String name = o.getOrDefault("--socket", "raw.sock");
    Path socket = watcher ? Path.of(registryEnv).resolve(name) : dir.resolve(name);
    Path kubeletSocket = dir.resolve("kubelet.sock");

    int unhealthy = Integer.parseInt(o.getOrDefault("--unhealthy", "0"));
    List<Device> devices = new ArrayList<>(TestPlugin.healthyDevices(count));
    Set<String> healthyIds = new HashSet<>();
    for (int i = 0; i < count; i++) {
      if (i >= count - unhealthy) {
        devices.set(i, devices.get(i).toBuilder().setHealth("Unhealthy").build());
      } else {
        healthyIds.add(devices.get(i).getID());
      }
    }
    if (mode.equals("duplicate-ids")) {
      devices = new ArrayList<>(devices);
      devices.add(TestPlugin.device("dev-0", "Healthy", 0));
    }
    if (mode.equals("oversize-list")) {
      devices = new ArrayList<>();
      String pad = "x".repeat(50);
      for (int i = 0; i < 80_000; i++) {
        devices.add(TestPlugin.device(pad + i, "Healthy", -1));
      }
    }
    TestPlugin plugin = new TestPlugin(resource, socket).devices(devices).options(true, true);
    TestPlugin second =
        also == null
            ? null
            : new TestPlugin(also, dir.resolve("raw-also.sock"))
                .devices(devices)
                .options(false, false);
    if (watcher) {
      plugin.pluginInfo(
          PluginInfo.newBuilder()
              .setType("DevicePlugin")
              .setName(resource)
              .setEndpoint("")
              .addSupportedVersions("v1beta1")
              .build());
    }
    if (unhealthy > 0) {
      plugin.allocateAnswer(req -> allocateHealthyOnly(req, healthyIds));
    }
    switch (mode) {
      case "options-error" ->
          plugin.optionsAnswer(
              e -> {
                throw Status.UNIMPLEMENTED
                    .withDescription("options are not implemented")
                    .asRuntimeException();
              });
      case "slow-initial-list" -> plugin.firstListDelayMillis(1500);
      case "bad-allocate-response" -> plugin.allocateAnswer(RawPluginMain::badResponse);
      case "accept-unknown-ids" -> plugin.allocateAnswer(RawPluginMain::acceptAnything);
      case "die-on-cancel" ->
          plugin.onStreamCancelled(
              () -> {
                System.out.println("stream cancelled: exiting");
                System.exit(3);
              });
      default -> {}
    }
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  if (mode.equals("keep-socket-on-sigterm")) {
                    // Like a plugin without signal handling: exit, leave the socket file behind.
                    System.out.println("SIGTERM: exiting without cleanup");
                  } else {
                    System.out.println("SIGTERM: stopping");
                    plugin.stop();
                    if (second != null) {
                      second.stop();
                    }
                  }
                }));

    Thread registering = null;
    if (mode.equals("register-before-serving")) {
      // Refuse the kubelet's first connection, however long registering takes, then serve.
      Files.deleteIfExists(socket);
      try (ServerSocketChannel refuser = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
        refuser.bind(UnixDomainSocketAddress.of(socket));
        registering = new Thread(() -> register(plugin, kubeletSocket), "register");
        registering.start();
        refuser.accept().close();
      }
      Files.deleteIfExists(socket);
    }
    plugin.start();
    System.out.println("serving " + resource + " on " + socket + " (mode " + mode + ")");
    if (watcher) {
      // The kubelet finds the socket itself; nothing else to do until SIGTERM.
      new java.util.concurrent.CountDownLatch(1).await();
      return;
    }
    // Watch before the first registration: a kubelet restart right after it is not missed.
    WatchService ws = FileSystems.getDefault().newWatchService();
    dir.register(ws, StandardWatchEventKinds.ENTRY_CREATE);
    if (mode.equals("bad-register-first")) {
      try {
        plugin.register(kubeletSocket, "v1alpha1", resource, name);
      } catch (RuntimeException e) {
        System.out.println("first registration refused: " + e.getMessage());
      }
    }
    if (registering != null) {
      registering.join();
    } else if (!register(plugin, kubeletSocket) && mode.equals("options-error")) {
      System.exit(1); // the kubelet refused it for good: no reason to wait for the timeout
    }
    if (second != null) {
      second.start();
      register(second, kubeletSocket);
    }
    try (ws) {
      while (true) {
        WatchKey key = ws.take();
        for (WatchEvent<?> e : key.pollEvents()) {
          if (kubeletSocket.getFileName().equals(e.context()) && !mode.equals("no-reregister")) {
            if (reRegisterDelayMillis > 0) {
              // The plugin's own timer (what it does, not a test waiting): it comes back late.
              System.out.println(
                  "kubelet restarted: registering again in " + reRegisterDelayMillis + " ms");
              Thread.sleep(reRegisterDelayMillis);
            }
            for (TestPlugin p : second == null ? List.of(plugin) : List.of(plugin, second)) {
              if (!Files.exists(p.socket())) {
                p.stop();
                p.start();
              }
              register(p, kubeletSocket);
            }
          }
        }
        key.reset();
      }
    }
  }

  private static boolean register(TestPlugin plugin, Path kubeletSocket) {
    try {
      plugin.register(kubeletSocket);
      System.out.println("registered with " + kubeletSocket);
      return true;
    } catch (RuntimeException e) {
      System.out.println("registration failed: " + e.getMessage());
      return false;
    }
  }

  private static AllocateResponse allocateHealthyOnly(
      io.github.deviceplugin4j.api.v1beta1.AllocateRequest req, Set<String> healthyIds) {
    AllocateResponse.Builder b = AllocateResponse.newBuilder();
    for (ContainerAllocateRequest c : req.getContainerRequestsList()) {
      ContainerAllocateResponse.Builder r = ContainerAllocateResponse.newBuilder();
      for (String id : c.getDevicesIdsList()) {
        if (!healthyIds.contains(id)) {
          throw Status.FAILED_PRECONDITION
              .withDescription("device " + id + " is unknown or unhealthy")
              .asRuntimeException();
        }
        r.addDevices(
            DeviceSpec.newBuilder()
                .setHostPath("/dev/" + id)
                .setContainerPath("/dev/" + id)
                .setPermissions("rw"));
      }
      b.addContainerResponses(r);
    }
    return b.build();
  }

  private static AllocateResponse acceptAnything(
      io.github.deviceplugin4j.api.v1beta1.AllocateRequest req) {
    AllocateResponse.Builder b = AllocateResponse.newBuilder();
    for (ContainerAllocateRequest c : req.getContainerRequestsList()) {
      b.addContainerResponses(
          ContainerAllocateResponse.newBuilder()
              .putEnvs("RAW_DEVICES", String.join(",", c.getDevicesIdsList())));
    }
    return b.build();
  }

  private static AllocateResponse badResponse(
      io.github.deviceplugin4j.api.v1beta1.AllocateRequest req) {
    return AllocateResponse.newBuilder()
        .addContainerResponses(
            ContainerAllocateResponse.newBuilder()
                .putEnvs("1BAD", "x")
                .addDevices(
                    DeviceSpec.newBuilder()
                        .setHostPath("dev/raw")
                        .setContainerPath("/dev/raw")
                        .setPermissions("rwx")))
        .build();
  }
}
