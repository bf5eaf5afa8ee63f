package io.github.deviceplugin4j.testkit.cli;

import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.AllocationException;
import io.github.deviceplugin4j.testkit.DeviceSpec;
import io.github.deviceplugin4j.testkit.DeviceState;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.MountSpec;
import io.github.deviceplugin4j.testkit.PodRequest;
import io.github.deviceplugin4j.testkit.Registration;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;

/** {@code fake-kubelet serve}: a fake kubelet driven by stdin, events as JSON lines on stdout. */
@CommandLine.Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    sortOptions = false,
    usageHelpAutoWidth = true,
    header = "Run the fake kubelet: commands on stdin, events as JSON lines on stdout.",
    description = {
      "Serves kubelet.sock in DIR (and watches a plugins registry, and serves PodResources) and"
          + " prints every event as one JSON object per line on stdout. Commands on stdin, one a"
          + " line:",
      "  allocate RESOURCE COUNT       the kubelet chooses COUNT devices",
      "  allocate RESOURCE ID...       exactly these IDs (--ids before a numeric ID)",
      "  release POD_UID [CONTAINER]   release a pod's (or one container's) devices",
      "  devices RESOURCE              print the devices, capacity and allocatable",
      "  await-registration RESOURCE [SECONDS]",
      "                                wait for a registration (default 10 s)",
      "  await-devices RESOURCE COUNT [SECONDS]",
      "                                wait for COUNT healthy devices (default 10 s)",
      "  cancel RESOURCE               cancel ListAndWatch (the kubelet reopens it)",
      "  drop RESOURCE                 drop the plugin's connection",
      "  restart                       restart like a kubelet: sockets deleted, served",
      "                                again",
      "  quit                          stop and exit 0",
      "At the end of stdin the fake keeps serving until SIGTERM/SIGINT, or exits with"
          + " --exit-on-eof.",
      ""
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:stopped by quit, the end of stdin (--exit-on-eof), SIGTERM or SIGINT",
      "1:a runtime failure (e.g. the directory or a socket cannot be used)",
      "2:a usage error"
    })
final class ServeCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @CommandLine.Option(
      names = "--dir",
      required = true,
      paramLabel = "DIR",
      description = "The device plugin directory: kubelet.sock is served there.")
  Path dir;

  @CommandLine.Option(
      names = "--watcher-dir",
      paramLabel = "DIR",
      description = "Watch this plugins registry directory (plugin watcher registration).")
  Path watcherDir;

  @CommandLine.Option(
      names = "--pod-resources",
      paramLabel = "SOCKET",
      description = "Serve the PodResources API on this socket.")
  Path podResources;

  @CommandLine.Option(
      names = "--grace-period-seconds",
      paramLabel = "N",
      description =
          "How long a disconnected resource is kept before it is removed (default: 300, as the"
              + " kubelet).")
  Long gracePeriodSeconds;

  @CommandLine.Option(
      names = "--supported-versions",
      paramLabel = "VERSION",
      split = ",",
      description = "The device plugin API versions Register accepts (default: v1beta1).")
  List<String> supportedVersions;

  @CommandLine.Mixin KubeletVersionOption kubeletVersion = new KubeletVersionOption();

  @CommandLine.Option(
      names = "--exit-on-eof",
      description = "Exit at the end of stdin instead of serving until SIGTERM.")
  boolean exitOnEof;

  private final PrintStream out;
  private final InputStream in;
  // await-registration waits for a registration after the last restart (race-free, by sequence).
  private volatile Mark lastRestart = new Mark(0, 0, java.time.Instant.EPOCH);

  ServeCommand(PrintStream out, InputStream in) {
    this.out = out;
    this.in = in;
  }

  @Override
  @SuppressWarnings("try") // the shutdown hook closes the kubelet too; close() is idempotent
  public Integer call() throws IOException {
    if (gracePeriodSeconds != null && gracePeriodSeconds < 0) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--grace-period-seconds: " + gracePeriodSeconds + " is negative");
    }
    FakeKubelet.Builder b =
        FakeKubelet.builder()
            .pluginDir(dir)
            .profile(kubeletVersion.profile)
            .eventListener(this::print);
    if (watcherDir != null) {
      b.registryDir(watcherDir);
    }
    if (podResources != null) {
      b.podResourcesSocket(podResources);
    }
    if (gracePeriodSeconds != null) {
      b.gracePeriod(Duration.ofSeconds(gracePeriodSeconds));
    }
    if (supportedVersions != null) {
      b.supportedVersions(supportedVersions.toArray(String[]::new));
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Thread hook;
    try (FakeKubelet kubelet = b.start()) {
      hook =
          new Thread(
              () -> {
                kubelet.close();
                stopped.countDown();
              },
              "fake-kubelet-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);
      emit(
          Json.object("ready")
              .put("dir", kubelet.pluginDir().toString())
              .put("kubeletSocket", kubelet.kubeletSocket().toString()));
      BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
      String line;
      boolean quit = false;
      while (!quit && (line = reader.readLine()) != null) {
        quit = !handle(kubelet, line.trim());
      }
      if (!quit && !exitOnEof) {
        // Serve until the process is told to stop; the shutdown hook closes the kubelet.
        try {
          stopped.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return 0;
      }
    }
    removeHook(hook);
    emit(Json.object("bye"));
    return 0;
  }

  private static void removeHook(Thread hook) {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // already shutting down
    }
  }

  /** Handles one command; false to quit. */
  private boolean handle(FakeKubelet kubelet, String line) {
    if (line.isEmpty() || line.startsWith("#")) {
      return true;
    }
    List<String> w = new ArrayList<>(Arrays.asList(line.split("\\s+")));
    String cmd = w.remove(0);
    try {
      switch (cmd) {
        case "quit", "exit" -> {
          return false;
        }
        case "allocate" -> allocate(kubelet, w, line);
        case "release" -> {
          if (w.isEmpty() || w.size() > 2) {
            throw new IllegalArgumentException("usage: release POD_UID [CONTAINER]");
          }
          if (w.size() == 2) {
            kubelet.release(w.get(0), w.get(1));
            emit(Json.object("released").put("podUid", w.get(0)).put("container", w.get(1)));
          } else {
            kubelet.release(w.get(0));
            emit(Json.object("released").put("podUid", w.get(0)));
          }
        }
        case "devices" -> {
          need(w, 1, "devices RESOURCE");
          devices(kubelet, w.get(0));
        }
        case "await-registration" -> {
          if (w.isEmpty() || w.size() > 2) {
            throw new IllegalArgumentException("usage: await-registration RESOURCE [SECONDS]");
          }
          long seconds = w.size() == 2 ? Long.parseLong(w.get(1)) : 10;
          Registration r =
              kubelet.awaitRegistration(w.get(0), lastRestart, Duration.ofSeconds(seconds));
          emit(
              Json.object("registered")
                  .put("resource", r.resourceName())
                  .put("endpoint", r.endpoint())
                  .put("version", r.version())
                  .put("mode", r.mode().name())
                  .put("time", r.at().toString())
                  .put("seq", r.seq()));
        }
        case "await-devices" -> {
          if (w.size() < 2 || w.size() > 3) {
            throw new IllegalArgumentException("usage: await-devices RESOURCE COUNT [SECONDS]");
          }
          int count = Integer.parseInt(w.get(1));
          long seconds = w.size() == 3 ? Long.parseLong(w.get(2)) : 10;
          kubelet.awaitDevices(
              w.get(0),
              l -> l.stream().filter(DeviceState::healthy).count() >= count,
              Duration.ofSeconds(seconds));
          devices(kubelet, w.get(0));
        }
        case "cancel" -> {
          need(w, 1, "cancel RESOURCE");
          kubelet.cancelListAndWatch(w.get(0));
        }
        case "drop" -> {
          need(w, 1, "drop RESOURCE");
          kubelet.dropConnection(w.get(0));
        }
        case "restart" -> {
          Mark m = kubelet.restart();
          lastRestart = m;
          emit(Json.object("restarted").put("time", m.time().toString()).put("seq", m.seq()));
        }
        default ->
            throw new IllegalArgumentException(
                "unknown command "
                    + cmd
                    + "; commands: allocate, release, devices,"
                    + " await-registration, cancel, drop, restart, quit");
      }
    } catch (AllocationException e) {
      emit(
          Json.object("error")
              .put("command", line)
              .put("message", e.getMessage())
              .put("code", e.code().name()));
    } catch (RuntimeException | AssertionError e) {
      String msg = String.valueOf(e.getMessage());
      int nl = msg.indexOf('\n');
      emit(
          Json.object("error")
              .put("command", line)
              .put("message", nl < 0 ? msg : msg.substring(0, nl)));
    }
    return true;
  }

  private static void need(List<String> w, int n, String usage) {
    if (w.size() != n) {
      throw new IllegalArgumentException("usage: " + usage);
    }
  }

  private void allocate(FakeKubelet kubelet, List<String> w, String line) {
    if (w.size() < 2) {
      throw new IllegalArgumentException(
          "usage: allocate RESOURCE COUNT | allocate RESOURCE ID...");
    }
    String resource = w.remove(0);
    Allocation alloc;
    if (w.get(0).equals("--ids")) {
      w.remove(0);
      alloc = kubelet.allocate(resource, w.toArray(String[]::new));
    } else if (w.size() == 1 && w.get(0).matches("\\d+")) {
      alloc = kubelet.allocate(PodRequest.count(resource, Integer.parseInt(w.get(0))));
    } else {
      alloc = kubelet.allocate(resource, w.toArray(String[]::new));
    }
    List<String> envs = new ArrayList<>();
    for (Map.Entry<String, String> e : alloc.envs().entrySet()) {
      envs.add(e.getKey() + "=" + e.getValue());
    }
    envs.sort(null);
    List<String> mounts = new ArrayList<>();
    for (MountSpec m : alloc.mounts()) {
      mounts.add(m.hostPath() + ":" + m.containerPath() + ":" + (m.readOnly() ? "ro" : "rw"));
    }
    List<String> devs = new ArrayList<>();
    for (DeviceSpec d : alloc.devices()) {
      devs.add(d.hostPath() + ":" + d.containerPath() + ":" + d.permissions());
    }
    List<String> annotations = new ArrayList<>();
    for (Map.Entry<String, String> e : alloc.annotations().entrySet()) {
      annotations.add(e.getKey() + "=" + e.getValue());
    }
    annotations.sort(null);
    emit(
        Json.object("allocation")
            .put("resource", alloc.resourceName())
            .put("podUid", alloc.podUid())
            .put("container", alloc.containerName())
            .put("deviceIds", alloc.deviceIds())
            .put("envs", envs)
            .put("mounts", mounts)
            .put("devices", devs)
            .put("annotations", annotations)
            .put("cdiDevices", alloc.cdiDevices())
            .put("problems", alloc.problems()));
  }

  private void devices(FakeKubelet kubelet, String resource) {
    List<DeviceState> list = kubelet.devices(resource);
    List<String> ids = new ArrayList<>();
    List<String> health = new ArrayList<>();
    List<String> numa = new ArrayList<>();
    for (DeviceState d : list) {
      ids.add(d.id());
      health.add(d.health());
      numa.add(
          d.numaNodes().stream().map(String::valueOf).reduce((x, y) -> x + "," + y).orElse(""));
    }
    emit(
        Json.object("devices")
            .put("resource", resource)
            .put("capacity", list.size())
            .put("allocatable", list.stream().filter(DeviceState::healthy).count())
            .put("registered", kubelet.registration(resource).isPresent())
            .put("ids", ids)
            .put("health", health)
            .put("numa", numa));
  }

  private void print(KubeletEvent e) {
    Json json =
        Json.object("event")
            .put("seq", e.seq())
            .put("time", e.time().toString())
            .put("kind", e.kind().name())
            .put("resource", e.resource())
            .put("outcome", e.outcome().name())
            .put("detail", e.detail());
    e.devices().ifPresent(n -> json.put("devices", n));
    e.healthy().ifPresent(n -> json.put("healthy", n));
    e.bytes().ifPresent(n -> json.put("bytes", n));
    e.allocatable().ifPresent(n -> json.put("allocatable", n));
    e.endpoint().ifPresent(v -> json.put("endpoint", v));
    e.version().ifPresent(v -> json.put("version", v));
    emit(json);
  }

  private void emit(Json json) {
    synchronized (out) {
      out.println(json);
      out.flush();
    }
  }
}
