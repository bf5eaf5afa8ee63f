package io.github.deviceplugin4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.api.drahealth.v1alpha1.HealthStatus;
import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.testkit.KubeletEvent.Kind;
import io.github.deviceplugin4j.testkit.KubeletEvent.Outcome;
import io.github.deviceplugin4j.testkit.plugin.TestDraDriver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DraKubeletTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);
  static final String DRIVER = "fpga.example.com";

  @TempDir Path dir;

  private FakeKubelet kubelet() {
    return FakeKubelet.builder()
        .pluginDir(dir.resolve("dp"))
        .registryDir(dir.resolve("reg"))
        .start();
  }

  private TestDraDriver driver() {
    return new TestDraDriver(DRIVER, dir.resolve("p/dra.sock"), dir.resolve("reg/fpga.sock"));
  }

  private static DraClaim claim(String name) {
    return new DraClaim("default", "uid-" + name, name);
  }

  private PluginInfo.Builder info() {
    return PluginInfo.newBuilder()
        .setType("DRAPlugin")
        .setName(DRIVER)
        .setEndpoint(dir.resolve("p/dra.sock").toString());
  }

  @Test
  void registersADraDriverFromTheRegistryAndUsesTheFirstServiceOfItsListTheKubeletKnows()
      throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver driver = driver().start()) {
      DraRegistration r = kubelet.dra().awaitRegistration(DRIVER, WAIT);
      assertThat(r.service()).isEqualTo(DraKubelet.V1_SERVICE);
      assertThat(r.endpoint()).isEqualTo(dir.resolve("p/dra.sock").toString());
      RegistrationStatus status = driver.statuses.poll(5, TimeUnit.SECONDS);
      assertThat(status).isNotNull();
      assertThat(status.getPluginRegistered()).isTrue();
      assertThat(kubelet.dra().registration(DRIVER)).contains(r);
    }
    // Like validateSupportedServices: the plugin's order decides, not the kubelet's.
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver driver =
            driver()
                .pluginInfo(
                    info()
                        .addSupportedVersions(DraKubelet.V1BETA1_SERVICE)
                        .addSupportedVersions(DraKubelet.V1_SERVICE)
                        .build())
                .start()) {
      assertThat(kubelet.dra().awaitRegistration(DRIVER, WAIT).service())
          .isEqualTo(DraKubelet.V1BETA1_SERVICE);
    }
  }

  @Test
  void refusesUnknownServicesWithTheKubeletsTextThroughNotifyRegistrationStatus() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver driver =
            driver().pluginInfo(info().addSupportedVersions("v1alpha4.Node").build()).start()) {
      RegistrationStatus status = driver.statuses.poll(5, TimeUnit.SECONDS);
      assertThat(status).isNotNull();
      assertThat(status.getPluginRegistered()).isFalse();
      assertThat(status.getError())
          .startsWith("RegisterPlugin error -- plugin validation failed with err: ")
          .contains("invalid supported gRPC versions of DRA driver plugin " + DRIVER)
          .contains(
              "none of services supported by the plugin ([\"v1alpha4.Node\"]) are supported by"
                  + " the kubelet");
      assertThat(kubelet.dra().registrations()).isEmpty();
      assertThat(kubelet.events())
          .anyMatch(e -> e.kind() == Kind.DRA_REGISTER && e.outcome() == Outcome.FAILED);
    }
  }

  /** The names the SDK's driver listed until issue 29: full gRPC names no kubelet knows. */
  static final List<String> FULL_GRPC_NAMES =
      List.of(
          "k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin",
          "k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin",
          "v1.DRAResourceHealth",
          "v1alpha1.DRAResourceHealth");

  private FakeKubelet kubelet(KubeletProfile profile) {
    return FakeKubelet.builder()
        .pluginDir(dir.resolve("dp"))
        .registryDir(dir.resolve("reg"))
        .profile(profile)
        .start();
  }

  @Test
  void fromV1_34TheFullGrpcNamesAreRefusedWithTheNamesTheKubeletKnows() throws Exception {
    // dra_plugin_manager.go, validateSupportedServices (1.34 and newer): no known entry, no
    // registration.
    for (KubeletProfile profile : List.of(KubeletProfile.V1_34, KubeletProfile.LATEST)) {
      try (FakeKubelet kubelet = kubelet(profile);
          TestDraDriver driver =
              driver()
                  .pluginInfo(info().addAllSupportedVersions(FULL_GRPC_NAMES).build())
                  .start()) {
        RegistrationStatus status = driver.statuses.poll(5, TimeUnit.SECONDS);
        assertThat(status).as(profile.toString()).isNotNull();
        assertThat(status.getPluginRegistered()).isFalse();
        assertThat(status.getError())
            .contains(
                "none of services supported by the plugin ([\"k8s.io.kubelet.pkg.apis.dra.v1"
                    + ".DRAPlugin\" \"k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPlugin\""
                    + " \"v1.DRAResourceHealth\" \"v1alpha1.DRAResourceHealth\"]) are supported"
                    + " by the kubelet ([\"v1.DRAPlugin\" \"v1beta1.DRAPlugin\"])");
        assertThat(kubelet.dra().registrations()).isEmpty();
      }
    }
  }

  @Test
  void onV1_32TheFullGrpcNamesFallBackToTheAlphaServiceAndEveryCallFailsUnimplemented()
      throws Exception {
    // registration.go, validateSupportedServices (1.32/1.33): nothing known, so v1alpha3.Node.
    try (FakeKubelet kubelet = kubelet(KubeletProfile.V1_32);
        TestDraDriver driver =
            driver().pluginInfo(info().addAllSupportedVersions(FULL_GRPC_NAMES).build()).start()) {
      DraRegistration r = kubelet.dra().awaitRegistration(DRIVER, WAIT);
      assertThat(r.service()).isEqualTo(DraKubelet.V1ALPHA3_FALLBACK_SERVICE);
      assertThat(driver.statuses.poll(5, TimeUnit.SECONDS).getPluginRegistered()).isTrue();

      DraResult prepare = kubelet.dra().prepareResources("pod-1", DRIVER, List.of(claim("a")));
      assertThat(prepare.ok()).isFalse();
      assertThat(prepare.callError().orElseThrow())
          .startsWith("rpc error: code = Unimplemented desc = ")
          .contains("v1alpha3.Node/NodePrepareResources");
      assertThat(driver.prepareCalls).hasValue(0);
      DraResult unprepare = kubelet.dra().nodeUnprepareResources(DRIVER, List.of(claim("a")));
      assertThat(unprepare.callError().orElseThrow())
          .startsWith("rpc error: code = Unimplemented desc = ")
          .contains("v1alpha3.Node/NodeUnprepareResources");
    }
  }

  @Test
  void onV1_32TheNewestKnownServiceIsChosenWhateverThePluginsOrder() throws Exception {
    // registration.go (1.32/1.33) walks its own list, newest first: v1 is unknown there.
    try (FakeKubelet kubelet = kubelet(KubeletProfile.V1_32);
        TestDraDriver driver = driver().start()) {
      assertThat(kubelet.dra().awaitRegistration(DRIVER, WAIT).service())
          .isEqualTo(DraKubelet.V1BETA1_SERVICE);
    }
  }

  @Test
  void refusesADriverNameThatIsNotADnsSubdomainAndARelativeEndpoint() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver bad =
            driver()
                .pluginInfo(
                    info().setName("Bad_Name").addSupportedVersions(DraKubelet.V1_SERVICE).build())
                .start()) {
      RegistrationStatus status = bad.statuses.poll(5, TimeUnit.SECONDS);
      assertThat(status.getPluginRegistered()).isFalse();
      assertThat(status.getError()).contains("\"Bad_Name\" is not a DNS subdomain");
    }
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver bad =
            driver()
                .pluginInfo(
                    info()
                        .setEndpoint("dra.sock")
                        .addSupportedVersions(DraKubelet.V1_SERVICE)
                        .build())
                .start()) {
      RegistrationStatus status = bad.statuses.poll(5, TimeUnit.SECONDS);
      assertThat(status.getPluginRegistered()).isFalse();
      assertThat(status.getError()).contains("\"dra.sock\" is not an absolute path");
      assertThat(kubelet.dra().registrations()).isEmpty();
    }
  }

  @Test
  void preparesClaimsOnceAndSharesThemBetweenPodsUntilTheLastUnprepares() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver driver = driver().start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      DraResult first =
          kubelet.dra().prepareResources("pod-1", DRIVER, List.of(claim("a"), claim("b")));
      assertThat(first.ok()).as(first.toString()).isTrue();
      assertThat(first.claim("uid-a").devices())
          .containsExactly(
              new DraDevice(List.of("req"), "node-a", "dev-a", List.of("example.com/dev=a")));
      assertThat(driver.prepareCalls).hasValue(1);

      // A second pod sharing claim a: the kubelet does not call the driver again.
      DraResult second = kubelet.dra().prepareResources("pod-2", DRIVER, List.of(claim("a")));
      assertThat(second.ok()).isTrue();
      assertThat(second.claim("uid-a").devices()).hasSize(1);
      assertThat(driver.prepareCalls).hasValue(1);

      DraResult gone1 = kubelet.dra().unprepareResources("pod-1", DRIVER);
      assertThat(gone1.claims()).containsOnlyKeys("uid-b");
      assertThat(driver.prepared).containsExactly("uid-a");
      DraResult gone2 = kubelet.dra().unprepareResources("pod-2", DRIVER);
      assertThat(gone2.claims()).containsOnlyKeys("uid-a");
      assertThat(driver.prepared).isEmpty();
      assertThat(kubelet.dra().preparedClaims()).isEmpty();
    }
  }

  @Test
  void aPerClaimErrorOrAMissingClaimFailsThePrepareLikeOnANode() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver driver = driver().start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      DraResult failed = kubelet.dra().prepareResources("pod", DRIVER, List.of(claim("fail-x")));
      assertThat(failed.ok()).isFalse();
      assertThat(failed.callError()).isEmpty();
      assertThat(failed.kubeletError())
          .contains(
              "NodePrepareResources failed for ResourceClaim fail-x: claim fail-x cannot be"
                  + " prepared");
      DraResult skipped =
          kubelet.dra().prepareResources("pod", DRIVER, List.of(claim("ok"), claim("skip-y")));
      assertThat(skipped.kubeletError()).contains("NodePrepareResources skipped 1 ResourceClaims");
      // Not prepared as far as the kubelet is concerned: nothing is remembered.
      assertThat(kubelet.dra().preparedClaims()).isEmpty();
      DraResult unknown =
          kubelet.dra().prepareResources("pod", "other.example.com", List.of(claim("a")));
      assertThat(unknown.kubeletError()).contains("DRA driver other.example.com is not registered");
    }
  }

  @Test
  void watchesDeviceHealthOnTheServiceTheKubeletCalls() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver driver = driver().start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      Mark m = kubelet.mark();
      driver.setHealth("dev-0", HealthStatus.UNHEALTHY, "fell off the bus");
      List<DraDeviceHealth> health =
          kubelet
              .dra()
              .awaitDeviceHealth(
                  DRIVER,
                  l ->
                      l.stream()
                          .anyMatch(
                              h ->
                                  h.deviceName().equals("dev-0")
                                      && h.status() == DraDeviceHealth.Status.UNHEALTHY),
                  WAIT);
      assertThat(health.get(0).poolName()).isEqualTo("node-a");
      assertThat(health.get(0).message()).isEqualTo("fell off the bus");
      kubelet.awaitEvent(m, e -> e.kind() == Kind.DRA_HEALTH && e.outcome() == Outcome.OK, WAIT);
    }
  }

  @Test
  void acceptsADriverWithoutHealthSilently() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver driver = driver().health(false).start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      KubeletEvent e = kubelet.awaitEvent(e2 -> e2.kind() == Kind.DRA_HEALTH, WAIT);
      assertThat(e.outcome()).isEqualTo(Outcome.INFO);
      assertThat(e.detail()).contains("UNIMPLEMENTED");
      assertThat(kubelet.dra().deviceHealth(DRIVER)).isEmpty();
      assertThat(kubelet.dra().prepareResources("pod", DRIVER, List.of(claim("a"))).ok()).isTrue();
    }
  }

  @Test
  void rediscoversTheDriverAfterARestartAndUnpreparesWhatWasPreparedBefore() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver driver = driver().start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      assertThat(kubelet.dra().prepareResources("pod", DRIVER, List.of(claim("a"))).ok()).isTrue();
      Mark restarted = kubelet.restart();
      DraRegistration again = kubelet.dra().awaitRegistration(DRIVER, restarted, WAIT);
      assertThat(again.isAfter(restarted)).isTrue();
      assertThat(kubelet.dra().preparedClaims())
          .extracting(c -> c.claim().uid())
          .containsExactly("uid-a");
      DraResult r = kubelet.dra().unprepareResources("pod", DRIVER);
      assertThat(r.ok()).isTrue();
      assertThat(r.claims()).containsOnlyKeys("uid-a");
      assertThat(driver.prepared).isEmpty();
    }
  }

  @Test
  void aRemovedRegistrySocketDeregistersTheDriver() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver driver = driver().start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      Mark m = kubelet.mark();
      Files.delete(driver.registrySocket());
      kubelet.awaitEvent(m, e -> e.kind() == Kind.DRA_DEREGISTER, WAIT);
      assertThat(kubelet.dra().registration(DRIVER)).isEmpty();
      assertThat(kubelet.dra().prepareResources("pod", DRIVER, List.of(claim("a"))).kubeletError())
          .contains("DRA driver " + DRIVER + " is not registered");
    }
  }

  @Test
  void unprepareOfAClaimTheDriverNeverSawIsSentAsGiven() throws Exception {
    try (FakeKubelet kubelet = kubelet();
        TestDraDriver driver = driver().start()) {
      kubelet.dra().awaitRegistration(DRIVER, WAIT);
      DraResult r = kubelet.dra().nodeUnprepareResources(DRIVER, List.of(claim("never")));
      assertThat(r.ok()).isTrue();
      assertThat(r.claim("uid-never").ok()).isTrue();
    }
  }
}
