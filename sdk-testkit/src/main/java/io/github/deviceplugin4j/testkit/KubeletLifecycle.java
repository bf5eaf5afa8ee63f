package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import io.grpc.ManagedChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The fake kubelet process's lifecycle: start, restart and stop, each step in the kubelet's order
 * (the plugin directory cleaned and {@code kubelet.sock} served, the DRA handler's ResourceSlice
 * wipe, then the registry watcher and PodResources), and the leak check after {@code close()}.
 * Restart and close run one at a time, under its own lock; state changes go through the parts,
 * under the journal's lock.
 */
final class KubeletLifecycle {
  private final ReentrantLock lock = new ReentrantLock();
  private final Path kubeletSocket;
  private final KubeletProfile profile;
  private final Optional<Path> registryDir;
  private final Optional<Path> podResourcesSocket;
  private final EventJournal journal;
  private final DeviceManagerModel model;
  private final KubeletServers servers;
  private final WatcherRegistrar watchers;
  private final DraPluginManager dra;
  private final UdsTransport transport;
  private final Runnable draSliceWiper;

  KubeletLifecycle(
      Path kubeletSocket,
      KubeletProfile profile,
      Optional<Path> registryDir,
      Optional<Path> podResourcesSocket,
      EventJournal journal,
      DeviceManagerModel model,
      KubeletServers servers,
      WatcherRegistrar watchers,
      DraPluginManager dra,
      UdsTransport transport,
      Runnable draSliceWiper) {
    this.kubeletSocket = kubeletSocket;
    this.profile = profile;
    this.registryDir = registryDir;
    this.podResourcesSocket = podResourcesSocket;
    this.journal = journal;
    this.model = model;
    this.servers = servers;
    this.watchers = watchers;
    this.dra = dra;
    this.transport = transport;
    this.draSliceWiper = draSliceWiper;
  }

  /**
   * The kubelet's start: the plugin directory cleaned, {@code kubelet.sock} served, the rest. When
   * a step fails, everything started so far is closed before the exception is thrown on.
   */
  void start() {
    try {
      serve();
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  private void serve() {
    List<Path> deleted = servers.serveKubeletSocket();
    journal.record(
        Kind.START,
        "",
        Outcome.INFO,
        "serving "
            + kubeletSocket
            + (deleted.isEmpty() ? "" : "; deleted " + KubeletServers.names(deleted))
            + (profile == KubeletProfile.LATEST ? "" : "; profile " + profile)
            + registryDir.map(d -> "; watching " + d).orElse("")
            + podResourcesSocket.map(p -> "; PodResources on " + p).orElse(""));
    wipeDraSlices();
    servers.serveTheRest();
  }

  /**
   * A kubelet restart (see {@link FakeKubelet#restart()}).
   *
   * @param before taken under the lock, before anything happens
   * @return the mark {@code before} returned
   */
  Mark restart(java.util.function.Supplier<Mark> before) {
    lock.lock();
    try {
      Mark m = before.get();
      model.locked(
          () -> {
            model.checkOpen();
            return journal.record(Kind.RESTART, "", Outcome.INFO, "stopping");
          });
      servers.stop();
      // One step: a plugin-watcher registration that connects meanwhile is abandoned.
      model.locked(
          () -> {
            watchers.clear();
            dra.kubeletRestarted();
            model.kubeletRestarted();
            return null;
          });
      List<Path> deleted = servers.serveKubeletSocket();
      journal.record(
          Kind.RESTART,
          "",
          Outcome.OK,
          "serving "
              + kubeletSocket
              + " again"
              + (deleted.isEmpty() ? "" : "; deleted " + KubeletServers.names(deleted)));
      wipeDraSlices();
      servers.serveTheRest();
      return m;
    } finally {
      lock.unlock();
    }
  }

  /** The DRA registration handler's start: the node's ResourceSlices are deleted. */
  private void wipeDraSlices() {
    if (draSliceWiper == null) {
      return;
    }
    try {
      draSliceWiper.run();
      journal.record(
          Kind.DRA_SLICES_WIPED, "", Outcome.OK, "deleted the node's ResourceSlices (all drivers)");
    } catch (RuntimeException e) {
      journal.record(
          Kind.DRA_SLICES_WIPED,
          "",
          Outcome.FAILED,
          "could not delete the node's ResourceSlices: " + e);
    }
  }

  /** Stops everything (see {@link FakeKubelet#close()}); safe to call more than once. */
  void close() {
    lock.lock();
    try {
      if (!model.beginClose()) {
        return;
      }
      servers.stop();
      model.closeAll();
      dra.close();
      journal.record(Kind.STOP, "", Outcome.INFO, "closed");
      // Shuts down every channel to a plugin, waits for dials in progress, then the threads.
      transport.close();
    } finally {
      lock.unlock();
    }
  }

  /** What {@link #close()} failed to release (see {@link FakeKubelet#verifyClosed()}). */
  List<String> leftovers() {
    List<String> problems = new ArrayList<>();
    if (!model.isClosed()) {
      problems.add("the fake kubelet was not closed");
      return problems;
    }
    for (ManagedChannel ch : transport.channels()) {
      if (!ch.isTerminated()) {
        problems.add("a channel to a plugin is not terminated: " + ch);
      }
    }
    if (!transport.isTerminated()) {
      problems.add("event loop or executors not terminated");
    }
    for (String t : transport.liveThreads()) {
      problems.add("thread still alive: " + t);
    }
    problems.addAll(servers.leftoverSockets());
    return problems;
  }
}
