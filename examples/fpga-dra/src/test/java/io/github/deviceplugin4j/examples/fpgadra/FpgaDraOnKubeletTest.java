package io.github.deviceplugin4j.examples.fpgadra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.github.deviceplugin4j.dra.BackendDevices;
import io.github.deviceplugin4j.dra.BackendDriver;
import io.github.deviceplugin4j.dra.DraPluginHost;
import io.github.deviceplugin4j.dra.testkit.DraCluster;
import io.github.deviceplugin4j.dra.testkit.DraTest;
import io.github.deviceplugin4j.testkit.DraClaim;
import io.github.deviceplugin4j.testkit.DraDeviceHealth;
import io.github.deviceplugin4j.testkit.DraResult;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The FPGA DRA driver on a whole simulated node from {@code @DraTest}: the fake kubelet finds it in
 * the plugins registry, prepares and unprepares a claim the test allocated in the mock API server,
 * and sees a port turn unhealthy.
 */
@DraTest
class FpgaDraOnKubeletTest {
  private static final String DRIVER = FpgaDraConfig.DEFAULT_DRIVER_NAME;
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path root; // the node's sysfs and /dev
  DraCluster cluster; // set by @DraTest before each test: kubelet, API server, client, node name

  @Test
  void aClaimIsPreparedForAPodAndUnpreparedAfterIt() throws Exception {
    DraTestNode node = new DraTestNode(root);
    FakeKubelet kubelet = cluster.kubelet();
    BackendDriver driver =
        FpgaDraDriver.builder(config()).kubernetesClient(cluster.client()).build();
    driver.start();
    try (driver;
        DraPluginHost host =
            DraPluginHost.builder(DRIVER, driver)
                .pluginDir(cluster.pluginDir(DRIVER))
                .registryDir(cluster.registryDir())
                .start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      String port0 = BackendDevices.deviceName("dfl-port.0");
      ResourceClaim claim =
          cluster.assign("team-a", "accel", "port", DRIVER, port0); // the test plays the scheduler
      String uid = claim.getMetadata().getUid();

      DraResult prepared =
          kubelet
              .dra()
              .prepareResources("pod-1", DRIVER, List.of(new DraClaim("team-a", uid, "accel")));

      assertThat(prepared.ok()).as("%s", prepared).isTrue();
      assertThat(prepared.claim(uid).devices())
          .singleElement()
          .satisfies(
              d ->
                  assertThat(d.cdiDeviceIds())
                      .containsExactly(DRIVER + "/port=" + uid + "-" + port0));
      assertThat(driver.cdiSpecFile(uid)).exists();

      node.fpga.portErrors(0, "0x1");
      kubelet
          .dra()
          .awaitDeviceHealth(
              DRIVER,
              list ->
                  list.stream()
                      .anyMatch(
                          h ->
                              h.deviceName().equals(port0)
                                  && h.status() == DraDeviceHealth.Status.UNHEALTHY),
              WAIT);

      DraResult unprepared = kubelet.dra().unprepareResources("pod-1", DRIVER);
      assertThat(unprepared.ok()).as("%s", unprepared).isTrue();
      assertThat(driver.cdiSpecFile(uid)).doesNotExist();
    }
  }

  /** The driver on a fresh node, started; closed with the host that {@link #host} returns. */
  private BackendDriver startedDriver() {
    new DraTestNode(root);
    BackendDriver driver =
        FpgaDraDriver.builder(config()).kubernetesClient(cluster.client()).build();
    driver.start();
    return driver;
  }

  private DraPluginHost host(BackendDriver driver) {
    return DraPluginHost.builder(DRIVER, driver)
        .pluginDir(cluster.pluginDir(DRIVER))
        .registryDir(cluster.registryDir())
        .start();
  }

  @Test
  void theDriverIsRegisteredAgainAfterAKubeletRestart() {
    BackendDriver driver = startedDriver();
    try (driver;
        DraPluginHost host = host(driver)) {
      cluster.kubelet().dra().awaitRegistration(DRIVER, WAIT);
      var again =
          cluster.kubelet().dra().awaitRegistration(DRIVER, cluster.kubelet().restart(), WAIT);
      assertThat(again.endpoint()).isEqualTo(host.draSocket().toString());
      await().atMost(WAIT).until(() -> sliceNames().size() == 2 /* counters, devices */);
    }
  }

  @Test
  void theSlicesTheKubeletWipesAtARestartAreBackWithFewApiCalls() {
    BackendDriver driver = startedDriver();
    try (driver;
        DraPluginHost host = host(driver)) {
      FakeKubelet kubelet = cluster.kubelet();
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      await().atMost(WAIT).until(() -> sliceNames().size() == 2 /* counters, devices */);
      List<String> published = sliceNames();

      for (int restart = 1; restart <= 2; restart++) {
        int before = cluster.apiServer().getRequestCount();
        int pollsBefore = polls.get();
        var mark = kubelet.restart();
        // Like a 1.32+ kubelet's DRA registration handler: every slice of the node is deleted.
        assertThat(kubelet.events(mark))
            .anyMatch(
                e ->
                    e.kind() == KubeletEvent.Kind.DRA_SLICES_WIPED
                        && e.outcome() == KubeletEvent.Outcome.OK);
        long wiped = System.nanoTime();

        await().atMost(Duration.ofSeconds(60)).until(() -> sliceNames().equals(published));

        long restoredMs = (System.nanoTime() - wiped) / 1_000_000;
        // Without this test's own lists, which a slow machine makes more of while it waits.
        int calls = cluster.apiServer().getRequestCount() - before - (polls.get() - pollsBefore);
        System.out.printf(
            "slice-recovery restart=%d restoredAfterMs=%d apiRequestsIncludingTheWipe=%d%n",
            restart, restoredMs, calls);
        // The wipe (a list and a delete), then the driver's repair (a list, a create): a
        // publisher that re-synced on its own writes would keep counting up.
        assertThat(calls).as("API requests from the wipe to the restored slice").isLessThan(12);
      }
    }
  }

  /** How many times {@link #sliceNames} asked the API server. */
  private final AtomicInteger polls = new AtomicInteger();

  private List<String> sliceNames() {
    polls.incrementAndGet();
    return cluster
        .client()
        .dynamicResourceAllocation()
        .v1()
        .resourcesSlices()
        .list()
        .getItems()
        .stream()
        .map(s -> s.getMetadata().getName())
        .sorted()
        .toList();
  }

  private FpgaDraConfig config() {
    return FpgaDraConfig.parse(
        new String[] {
          "--root=" + root, "--poll-interval=100ms", "--cdi-dir=" + cluster.cdiDir(),
        },
        Map.of("NODE_NAME", cluster.nodeName()));
  }
}
