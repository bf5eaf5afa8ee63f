package io.github.deviceplugin4j.dra;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.testkit.DraClaim;
import io.github.deviceplugin4j.testkit.DraDevice;
import io.github.deviceplugin4j.testkit.DraKubelet;
import io.github.deviceplugin4j.testkit.DraRegistration;
import io.github.deviceplugin4j.testkit.DraResult;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.KubeletProfile;
import io.github.deviceplugin4j.testkit.Mark;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@link DraPluginHost} with a small {@link DraDriver}, driven by the testkit's fake kubelet over
 * the plugins registry and the driver's real DRA socket: registration, prepare/unprepare for a pod,
 * health on both health service versions, and a kubelet restart.
 */
class DraOnFakeKubeletTest {

  private static final String DRIVER = "gpu.example.com";
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path tmp;

  private FakeKubelet kubelet(String healthService) {
    return FakeKubelet.builder()
        .pluginDir(tmp.resolve("k"))
        .registryDir(tmp.resolve("r"))
        .draHealthService(healthService)
        .start();
  }

  private DraPluginHost host(DraDriver driver) {
    return DraPluginHost.builder(DRIVER, driver)
        .pluginDir(tmp.resolve("p"))
        .registryDir(tmp.resolve("r"))
        .start();
  }

  @Test
  void theKubeletRegistersTheDriverOnTheNewestDraService() {
    try (FakeKubelet kubelet = kubelet(DraKubelet.HEALTH_V1ALPHA1_SERVICE);
        DraPluginHost host = host(new RecordingDriver())) {
      DraRegistration registration = kubelet.dra().awaitRegistration(DRIVER, WAIT);

      assertThat(registration.service()).isEqualTo("v1.DRAPlugin");
      assertThat(registration.endpoint()).isEqualTo(host.draSocket().toString());
      assertThat(Path.of(registration.registrySocket())).isEqualTo(host.registrationSocket());
    }
  }

  @Test
  void thePodsClaimsArePreparedThenUnpreparedThroughTheDriver() {
    RecordingDriver driver = new RecordingDriver();
    try (FakeKubelet kubelet = kubelet(DraKubelet.HEALTH_V1ALPHA1_SERVICE);
        DraPluginHost host = host(driver)) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      List<DraClaim> claims =
          List.of(new DraClaim("team-a", "uid-1", "small"), new DraClaim("team-a", "uid-2", "big"));

      DraResult prepared = kubelet.dra().prepareResources("pod-1", DRIVER, claims);

      assertThat(prepared.ok()).as("%s", prepared).isTrue();
      // The driver names the subrequest "gpu/small"; the kubelet is told the request, "gpu".
      assertThat(prepared.claim("uid-1").devices())
          .containsExactly(
              new DraDevice(
                  List.of("gpu"), "node-1", "dev-uid-1", List.of("example.com/gpu=uid-1")));
      assertThat(prepared.claim("uid-2").devices())
          .singleElement()
          .satisfies(d -> assertThat(d.cdiDeviceIds()).containsExactly("example.com/gpu=uid-2"));
      assertThat(driver.prepared).containsExactlyInAnyOrder("uid-1", "uid-2");
      assertThat(host.preparedClaims()).containsOnlyKeys("uid-1", "uid-2");

      DraResult unprepared = kubelet.dra().unprepareResources("pod-1", DRIVER);

      assertThat(unprepared.ok()).as("%s", unprepared).isTrue();
      assertThat(unprepared.claims()).containsOnlyKeys("uid-1", "uid-2");
      assertThat(driver.unprepared).containsExactlyInAnyOrder("uid-1", "uid-2");
      assertThat(host.preparedClaims()).isEmpty();
      assertThat(kubelet.dra().preparedClaims()).isEmpty();
    }
  }

  @Test
  void aClaimTheDriverCannotPrepareIsAPerClaimErrorTheKubeletReports() {
    try (FakeKubelet kubelet = kubelet(DraKubelet.HEALTH_V1ALPHA1_SERVICE);
        DraPluginHost host = host(new RecordingDriver())) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);

      DraResult result =
          kubelet
              .dra()
              .prepareResources(
                  "pod-1",
                  DRIVER,
                  List.of(
                      new DraClaim("team-a", "ok-1", "fine"),
                      new DraClaim("team-a", "fail-1", "x")));

      assertThat(result.callError()).isEmpty();
      assertThat(result.claim("ok-1").ok()).isTrue();
      assertThat(result.claim("fail-1").error()).contains("no device free for x");
      assertThat(result.kubeletError()).hasValueSatisfying(e -> assertThat(e).contains("x"));
    }
  }

  @Test
  void unprepareOfAClaimTheDriverNeverPreparedSucceeds() {
    try (FakeKubelet kubelet = kubelet(DraKubelet.HEALTH_V1ALPHA1_SERVICE);
        DraPluginHost host = host(new RecordingDriver())) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);

      DraResult result =
          kubelet
              .dra()
              .nodeUnprepareResources(DRIVER, List.of(new DraClaim("ns", "never", "ghost")));

      assertThat(result.ok()).as("%s", result).isTrue();
      assertThat(result.claim("never").ok()).isTrue();
    }
  }

  @Test
  void healthArrivesOnTheV1alpha1ServiceTheKubeletWatchesByDefault() {
    healthArrivesOn(DraKubelet.HEALTH_V1ALPHA1_SERVICE);
  }

  @Test
  void healthArrivesOnTheV1ServiceWhenTheKubeletWatchesThat() {
    healthArrivesOn(DraKubelet.HEALTH_V1_SERVICE);
  }

  private void healthArrivesOn(String service) {
    DraHealthTest.HealthyDriver driver = new DraHealthTest.HealthyDriver();
    try (FakeKubelet kubelet = kubelet(service);
        DraPluginHost host = host(driver)) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      var healthy = kubelet.dra().awaitDeviceHealth(DRIVER, list -> !list.isEmpty(), WAIT).get(0);
      assertThat(healthy.poolName()).isEqualTo("node-1");
      assertThat(healthy.deviceName()).isEqualTo("gpu-0");
      assertThat(healthy.status())
          .isEqualTo(io.github.deviceplugin4j.testkit.DraDeviceHealth.Status.HEALTHY);

      driver
          .sink
          .get()
          .publish(List.of(DraDeviceHealth.unhealthy("node-1", "gpu-0", "ECC errors")));

      var sick =
          kubelet
              .dra()
              .awaitDeviceHealth(
                  DRIVER,
                  list ->
                      list.stream()
                          .anyMatch(
                              h ->
                                  h.status()
                                      == io.github.deviceplugin4j.testkit.DraDeviceHealth.Status
                                          .UNHEALTHY),
                  WAIT)
              .get(0);
      assertThat(sick.message()).isEqualTo("ECC errors");
    }
  }

  @Test
  void theDriverIsRegisteredAgainAfterAKubeletRestartAndCanUnprepareWhatItPrepared() {
    RecordingDriver driver = new RecordingDriver();
    try (FakeKubelet kubelet = kubelet(DraKubelet.HEALTH_V1ALPHA1_SERVICE);
        DraPluginHost host = host(driver)) {
      DraRegistration first = kubelet.dra().awaitRegistration(DRIVER, WAIT);
      assertThat(
              kubelet
                  .dra()
                  .prepareResources("pod-1", DRIVER, List.of(new DraClaim("ns", "uid-r", "kept")))
                  .ok())
          .isTrue();

      Mark restarted = kubelet.restart();
      DraRegistration again = kubelet.dra().awaitRegistration(DRIVER, restarted, WAIT);

      assertThat(again.seq()).isGreaterThan(first.seq());
      assertThat(again.endpoint()).isEqualTo(host.draSocket().toString());
      DraResult unprepared = kubelet.dra().unprepareResources("pod-1", DRIVER);
      assertThat(unprepared.ok()).as("%s", unprepared).isTrue();
      assertThat(driver.unprepared).containsExactly("uid-r");
      assertThat(host.preparedClaims()).isEmpty();
    }
  }

  @Test
  void inEveryProfileTheDriverRegistersOnAKnownServiceAndPreparesAgainAfterARestart() {
    for (KubeletProfile profile : KubeletProfile.values()) {
      RecordingDriver driver = new RecordingDriver();
      try (FakeKubelet kubelet =
              FakeKubelet.builder()
                  .pluginDir(tmp.resolve("k"))
                  .registryDir(tmp.resolve("r"))
                  .profile(profile)
                  .start();
          DraPluginHost host = host(driver)) {
        DraRegistration r = kubelet.dra().awaitRegistration(DRIVER, WAIT);
        // 1.34+ take the driver's first known entry (v1); 1.32/1.33 know only v1beta1 of the two.
        assertThat(r.service())
            .as("%s", profile)
            .isEqualTo(profile.refusesUnknownDraServices() ? "v1.DRAPlugin" : "v1beta1.DRAPlugin");
        List<DraClaim> claims = List.of(new DraClaim("ns", "uid-" + profile, "c"));
        assertThat(kubelet.dra().prepareResources("pod-1", DRIVER, claims).ok()).isTrue();

        Mark restarted = kubelet.restart();
        kubelet.dra().awaitRegistration(DRIVER, restarted, WAIT);
        Mark before = kubelet.mark();
        DraResult again = kubelet.dra().prepareResources("pod-1", DRIVER, claims);

        assertThat(again.ok()).as("%s: %s", profile, again).isTrue();
        // 1.32/1.33 send claims restored from the checkpoint to the driver again.
        assertThat(kubelet.events(before))
            .filteredOn(e -> e.kind() == KubeletEvent.Kind.DRA_PREPARE)
            .singleElement()
            .satisfies(
                e ->
                    assertThat(e.detail().contains("1 claims sent"))
                        .as("%s: %s", profile, e.detail())
                        .isEqualTo(profile.preparesRestoredDraClaimsAgain()));
        DraResult unprepared = kubelet.dra().unprepareResources("pod-1", DRIVER);
        assertThat(unprepared.ok()).as("%s: %s", profile, unprepared).isTrue();
        assertThat(driver.unprepared).containsExactly("uid-" + profile);
      }
    }
  }
}
