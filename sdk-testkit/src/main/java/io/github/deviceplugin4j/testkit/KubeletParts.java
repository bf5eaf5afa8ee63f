package io.github.deviceplugin4j.testkit;

import io.github.deviceplugin4j.testkit.internal.UdsTransport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One fake kubelet's parts, built from its {@link KubeletSettings} and wired to each other in one
 * place, so that {@link FakeKubelet} and {@link DraKubelet} only delegate. Each part owns one kind
 * of state (the testkit's README, "How it is built", lists them); the settings are read here once.
 */
final class KubeletParts {
  final Path pluginDir;
  final Path kubeletSocket;
  final Optional<Path> registryDir;
  final Optional<Path> podResourcesSocket;
  final List<String> supportedVersions;
  final Consumer<FakeKubelet> afterRestartServed;
  final UdsTransport transport = new UdsTransport("fake-kubelet");
  final EventJournal journal;
  final DeviceManagerModel model;
  final LegacyRegistrationServer legacyRegistration;
  final DraPluginManager dra;
  final WatcherRegistrar watchers;
  final AllocationFlow allocationFlow;
  final KubeletLifecycle lifecycle;
  final KubeletAwaits awaits;

  KubeletParts(KubeletSettings s) {
    this.pluginDir = s.pluginDir();
    this.kubeletSocket = pluginDir.resolve(FakeKubelet.KUBELET_SOCKET);
    this.registryDir = s.registryDir();
    this.podResourcesSocket = s.podResourcesSocket();
    this.supportedVersions = s.supportedVersions();
    this.afterRestartServed = s.afterRestartServed();
    this.journal = EventJournal.system(pluginDir.toString(), s.listeners());
    this.model =
        new DeviceManagerModel(journal, s.profile(), s.gracePeriod(), this::scheduleOnTransport);
    PluginConnector connector = new PluginConnector(transport, model, journal, s.rpcTimeout());
    this.legacyRegistration =
        new LegacyRegistrationServer(pluginDir, supportedVersions, connector, journal);
    this.dra =
        new DraPluginManager(
            transport,
            journal,
            s.profile(),
            s.draCallTimeout(),
            Optional.ofNullable(s.draHealthService()));
    this.watchers =
        new WatcherRegistrar(transport, supportedVersions, connector, model, journal, dra);
    this.allocationFlow =
        new AllocationFlow(model, journal, connector, s.strictPreferredAllocation(), s.random());
    KubeletServers servers =
        new KubeletServers(
            pluginDir,
            registryDir,
            podResourcesSocket,
            s.profile(),
            transport,
            legacyRegistration,
            new PodResourcesView(model, allocationFlow, dra, journal),
            watchers);
    this.lifecycle =
        new KubeletLifecycle(
            kubeletSocket,
            s.profile(),
            registryDir,
            podResourcesSocket,
            journal,
            model,
            servers,
            watchers,
            dra,
            transport,
            s.draSliceWiper());
    this.awaits = new KubeletAwaits(journal, model, dra);
  }

  /** The model's timers (the grace period) run on the transport's scheduler. */
  private Runnable scheduleOnTransport(Runnable task, Duration after) {
    ScheduledFuture<?> f =
        transport.scheduler().schedule(task, after.toNanos(), TimeUnit.NANOSECONDS);
    return () -> f.cancel(false);
  }
}
