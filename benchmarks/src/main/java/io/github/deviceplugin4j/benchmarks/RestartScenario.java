package io.github.deviceplugin4j.benchmarks;

import io.github.deviceplugin4j.benchmarks.process.GoPrograms;
import io.github.deviceplugin4j.benchmarks.process.GoRestart;
import io.github.deviceplugin4j.core.DevicePluginHost;
import io.github.deviceplugin4j.core.RegistrationMode;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.Registration;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Kubelet restarts (the fake deletes the sockets in the plugin directory and serves a new {@code
 * kubelet.sock}) until the plugin is registered again, and until the kubelet has its device list
 * again, in legacy and in plugin-watcher mode.
 */
public final class RestartScenario implements Scenario {

  static final String RESOURCE = "bench.example.com/restart";
  static final int DEVICES = 8;
  static final int WARM_UP = 5;
  static final Duration STEP = Duration.ofSeconds(10);

  @Override
  public String name() {
    return "restart";
  }

  @Override
  public void run(BenchContext ctx, Report report) throws Exception {
    if (ctx.client() == BenchContext.Client.GO) {
      Optional<GoPrograms> go = GoPrograms.build(ctx);
      if (go.isEmpty()) {
        report.skipped(name() + " --client=go", GoPrograms.missingReason());
        return;
      }
      GoRestart.run(ctx, report, go.get());
      return;
    }
    List<List<String>> rows =
        report.table(
            "Kubelet restart → registered again",
            "From the instant the restarted fake kubelet serves kubelet.sock again to its record of"
                + " the plugin's registration, and to its record of the plugin's first device list"
                + " on the new connection; "
                + ctx.sizes().restarts()
                + " restarts per mode after "
                + WARM_UP
                + " warm-up restarts; ms.",
            "mode",
            "restarts",
            "registered p50",
            "p99",
            "max",
            "devices listed p50",
            "p99",
            "max");
    for (RegistrationMode mode :
        List.of(RegistrationMode.LEGACY, RegistrationMode.PLUGIN_WATCHER)) {
      Path dir = ctx.newDir("restart");
      FakeKubelet.Builder kb = FakeKubelet.builder().pluginDir(dir.resolve("dp"));
      DevicePluginHost.Builder hb =
          DevicePluginHost.builder()
              .pluginDir(dir.resolve("dp"))
              .registrationMode(mode)
              .backend(new BenchBackend(RESOURCE, DEVICES));
      if (mode == RegistrationMode.PLUGIN_WATCHER) {
        kb.registryDir(dir.resolve("reg"));
        hb.registryDir(dir.resolve("reg"));
      }
      int n = ctx.sizes().restarts();
      long[] registered = new long[n];
      long[] listed = new long[n];
      try (FakeKubelet kubelet = kb.start();
          DevicePluginHost host = hb.start()) {
        kubelet.awaitDevices(RESOURCE, l -> l.size() == DEVICES, Node.SETUP);
        for (int i = -WARM_UP; i < n; i++) {
          Mark restarted = kubelet.restart();
          Registration r = kubelet.awaitRegistration(RESOURCE, restarted, STEP);
          KubeletEvent served =
              kubelet.awaitEvent(
                  restarted,
                  e ->
                      e.kind() == KubeletEvent.Kind.RESTART
                          && e.outcome() == KubeletEvent.Outcome.OK,
                  STEP);
          KubeletEvent list =
              kubelet.awaitEvent(
                  restarted,
                  e ->
                      e.kind() == KubeletEvent.Kind.LIST_AND_WATCH
                          && e.resource().equals(RESOURCE)
                          && !e.failed()
                          && e.seq() > r.seq(),
                  STEP);
          Waits.until("the plugin to be ready again", STEP, host::isReady, kubelet::eventLog);
          if (i >= 0) {
            registered[i] = r.nanos() - served.nanos();
            listed[i] = list.nanos() - served.nanos();
          }
        }
      }
      Stats reg = Stats.of(registered);
      Stats lst = Stats.of(listed);
      String label = mode == RegistrationMode.LEGACY ? "legacy Register" : "plugin watcher";
      rows.add(
          List.of(
              label,
              Fmt.count(n),
              Fmt.ms(reg.percentile(50)),
              Fmt.ms(reg.percentile(99)),
              Fmt.ms(reg.max()),
              Fmt.ms(lst.percentile(50)),
              Fmt.ms(lst.percentile(99)),
              Fmt.ms(lst.max())));
      report.target(
          "Restart → registered p99, " + label,
          "≤ 50 ms",
          Fmt.ms(reg.percentile(99)) + " ms",
          reg.percentile(99) <= 50_000_000L);
    }
  }
}
