package io.github.deviceplugin4j.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.github.deviceplugin4j.api.pluginregistration.PluginInfo;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationGrpc;
import io.github.deviceplugin4j.api.pluginregistration.RegistrationStatus;
import io.github.deviceplugin4j.core.ConfigurationException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Registration through the kubelet's plugin watcher, socket names and their lifetime. */
class DraRegistrationTest {

  @TempDir Path tmp;

  private DraPluginHost.Builder builder(DraDriver driver) {
    return DraPluginHost.builder("gpu.example.com", driver)
        .pluginDir(tmp.resolve("p"))
        .registryDir(tmp.resolve("r"));
  }

  @Test
  void getInfoNamesTheDriverItsAbsoluteSocketAndBothDraServices() {
    try (DraPluginHost host = builder(new RecordingDriver()).start();
        KubeletClient kubelet = new KubeletClient()) {
      PluginInfo info = kubelet.getInfo(tmp.resolve("r/gpu.example.com-reg.sock"));

      assertThat(info.getType()).isEqualTo("DRAPlugin");
      assertThat(info.getName()).isEqualTo("gpu.example.com");
      assertThat(info.getEndpoint())
          .isEqualTo(tmp.resolve("p/dra.sock").toAbsolutePath().toString())
          .isEqualTo(host.draSocket().toString());
      assertThat(info.getSupportedVersionsList()).containsExactlyElementsOf(DraNames.SERVICES);
    }
  }

  @Test
  void aDriverThatReportsHealthAlsoListsTheHealthServices() {
    try (DraPluginHost host = builder(new DraHealthTest.HealthyDriver()).start();
        KubeletClient kubelet = new KubeletClient()) {
      PluginInfo info = kubelet.getInfo(host.registrationSocket());

      assertThat(info.getSupportedVersionsList())
          .containsExactly(
              "v1.DRAPlugin",
              "v1beta1.DRAPlugin",
              "v1.DRAResourceHealth",
              "v1alpha1.DRAResourceHealth");
    }
  }

  @Test
  void theKubeletsVerdictIsKept() {
    try (DraPluginHost host = builder(new RecordingDriver()).start();
        KubeletClient kubelet = new KubeletClient()) {
      var stub = RegistrationGrpc.newBlockingStub(kubelet.channel(host.registrationSocket()));
      stub.notifyRegistrationStatus(
          RegistrationStatus.newBuilder().setPluginRegistered(false).setError("no").build());
      assertThat(host.isRegistered()).isFalse();

      stub.notifyRegistrationStatus(
          RegistrationStatus.newBuilder().setPluginRegistered(true).build());
      assertThat(host.isRegistered()).isTrue();
    }
  }

  @Test
  void theRegistrationSocketComesBackAfterTheKubeletDeletesIt() throws Exception {
    try (DraPluginHost host = builder(new RecordingDriver()).start();
        KubeletClient kubelet = new KubeletClient()) {
      Files.delete(host.registrationSocket());

      await()
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions()
          .until(
              () -> kubelet.getInfo(host.registrationSocket()).getName().equals("gpu.example.com"));
    }
  }

  @Test
  void socketsAreOwnerOnly() throws Exception {
    try (DraPluginHost host = builder(new RecordingDriver()).start()) {
      for (Path socket : List.of(host.draSocket(), host.registrationSocket())) {
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)))
            .isEqualTo("rw-------");
      }
    }
  }

  @Test
  void rollingUpdateInstancesHaveTheirOwnSocketsAndRemoveOnlyThose() {
    try (DraPluginHost newPod = builder(new RecordingDriver()).rollingUpdate("uid-2").start()) {
      DraPluginHost oldPod = builder(new RecordingDriver()).rollingUpdate("uid-1").start();
      assertThat(oldPod.draSocket()).isEqualTo(tmp.resolve("p/dra-uid-1.sock").toAbsolutePath());
      assertThat(oldPod.registrationSocket())
          .isEqualTo(tmp.resolve("r/gpu.example.com-uid-1-reg.sock").toAbsolutePath());
      assertThat(newPod.draSocket()).isEqualTo(tmp.resolve("p/dra-uid-2.sock").toAbsolutePath());

      oldPod.close();

      assertThat(oldPod.draSocket()).doesNotExist();
      assertThat(oldPod.registrationSocket()).doesNotExist();
      assertThat(newPod.draSocket()).exists();
      assertThat(newPod.registrationSocket()).exists();
    }
  }

  @Test
  void aSecondInstanceOnTheSameSocketsIsAClearStartupError() {
    try (DraPluginHost first = builder(new RecordingDriver()).start()) {
      assertThatThrownBy(() -> builder(new RecordingDriver()).start())
          .isInstanceOf(ConfigurationException.class)
          .hasMessageContaining("another live process");
      assertThat(first.draSocket()).exists();
    }
  }

  @Test
  void aDriverNameThatIsNotADnsSubdomainIsRefused() {
    assertThatThrownBy(
            () ->
                DraPluginHost.builder("GPU_example", new RecordingDriver())
                    .pluginDir(tmp.resolve("p"))
                    .registryDir(tmp.resolve("r"))
                    .start())
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("'GPU_example'")
        .hasMessageContaining("DNS subdomain");
  }
}
