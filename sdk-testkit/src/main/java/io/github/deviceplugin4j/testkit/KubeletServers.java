package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.internal.PodResourcesService;
import io.github.deviceplugin4j.testkit.internal.RegistryWatcher;
import io.github.deviceplugin4j.testkit.internal.SocketFiles;
import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.BindableService;
import io.grpc.Server;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What the kubelet process serves and watches on the file system: the plugin directory's cleanup,
 * {@code kubelet.sock} (the {@link LegacyRegistrationServer}), the PodResources socket and the
 * plugins registry watcher. Started and stopped by {@link FakeKubelet}'s lifecycle, under its
 * lifecycle lock.
 */
final class KubeletServers {
  private final Path pluginDir;
  private final Path kubeletSocket;
  private final Optional<Path> registryDir;
  private final Optional<Path> podResourcesSocket;
  private final KubeletProfile profile;
  private final UdsTransport transport;
  private final BindableService registration;
  private final PodResourcesService.Source podResources;
  private final WatcherRegistrar watchers;
  // Guarded by the FakeKubelet's lifecycle lock.
  private Server kubeletServer;
  private Server podResourcesServer;
  private RegistryWatcher watcher;

  KubeletServers(
      Path pluginDir,
      Optional<Path> registryDir,
      Optional<Path> podResourcesSocket,
      KubeletProfile profile,
      UdsTransport transport,
      BindableService registration,
      PodResourcesService.Source podResources,
      WatcherRegistrar watchers) {
    this.pluginDir = pluginDir;
    this.kubeletSocket = pluginDir.resolve(FakeKubelet.KUBELET_SOCKET);
    this.registryDir = registryDir;
    this.podResourcesSocket = podResourcesSocket;
    this.profile = profile;
    this.transport = transport;
    this.registration = registration;
    this.podResources = podResources;
    this.watchers = watchers;
  }

  /**
   * Creates the plugin directory when missing, cleans it up like the device manager on start and
   * serves {@code kubelet.sock}.
   *
   * @return the files the cleanup deleted
   */
  List<Path> serveKubeletSocket() {
    try {
      Files.createDirectories(pluginDir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the plugin directory " + pluginDir, e);
    }
    List<Path> deleted = cleanUpPluginDir();
    kubeletServer = transport.startServer(kubeletSocket, registration);
    return deleted;
  }

  /** Serves PodResources and starts the registry watcher, when enabled. */
  void serveTheRest() {
    podResourcesSocket.ifPresent(this::startPodResources);
    registryDir.ifPresent(this::startWatcher);
  }

  /**
   * The device manager's cleanup on start ({@code CleanupPluginDirectory} in {@code
   * pkg/kubelet/cm/devicemanager/manager.go}): every non-directory entry but the checkpoint up to
   * v1.33, only sockets in the newest code. No {@code DEPRECATION} file: kubelets from v1.26 on
   * write none (see {@link KubeletProfile}).
   */
  private List<Path> cleanUpPluginDir() {
    return profile.deletesAllFilesOnStart()
        ? SocketFiles.deleteNonDirectoriesIn(pluginDir, FakeKubelet.CHECKPOINT_FILE)
        : SocketFiles.deleteSocketsIn(pluginDir);
  }

  private void startPodResources(Path socket) {
    try {
      Files.createDirectories(socket.getParent());
      Files.deleteIfExists(socket);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare the PodResources socket " + socket, e);
    }
    podResourcesServer = transport.startServer(socket, new PodResourcesService(podResources));
  }

  private void startWatcher(Path dir) {
    RegistryWatcher w =
        new RegistryWatcher(
            dir,
            p -> {
              WatcherRegistrar.Discovery d = watchers.discover(p);
              if (d != null) {
                transport.executor().execute(() -> watchers.registerDiscovered(p, d));
              }
            },
            watchers::removed);
    w.start();
    watcher = w;
  }

  /** Stops the watcher and the servers and deletes their sockets, as a Go listener does. */
  void stop() {
    RegistryWatcher w = watcher;
    watcher = null;
    if (w != null) {
      w.close();
    }
    for (Server s : new Server[] {kubeletServer, podResourcesServer}) {
      if (s != null) {
        s.shutdownNow();
        try {
          s.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    kubeletServer = null;
    podResourcesServer = null;
    deleteQuietly(kubeletSocket);
    podResourcesSocket.ifPresent(KubeletServers::deleteQuietly);
  }

  private static void deleteQuietly(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      // best effort
    }
  }

  /** The fake's own socket files still present (after {@link #stop()}: a leak). */
  List<String> leftoverSockets() {
    List<String> out = new ArrayList<>();
    if (Files.exists(kubeletSocket)) {
      out.add("socket file still present: " + kubeletSocket);
    }
    podResourcesSocket
        .filter(Files::exists)
        .ifPresent(p -> out.add("socket file still present: " + p));
    return out;
  }

  /** File names, for the event log. */
  static String names(List<Path> paths) {
    return paths.stream().map(p -> p.getFileName().toString()).toList().toString();
  }
}
