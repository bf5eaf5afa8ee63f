package io.github.deviceplugin4j.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class DraNamesTest {
  @Test
  void defaultEndpointIsTheDriversDirectoryUnderTheKubeletPlugins() {
    assertThat(DraNames.defaultEndpoint("fpga.example.com"))
        .isEqualTo(Path.of("/var/lib/kubelet/plugins/fpga.example.com/dra.sock"));
  }

  @Test
  void aNameThatIsNotOneDirectoryIsRefusedWithWhatToUse() {
    assertThatThrownBy(() -> DraNames.defaultEndpoint("a/b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'a/b'")
        .hasMessageContaining("DNS subdomain");
  }

  @Test
  void servicesAreUpstreamsShortNamesNewestFirst() {
    // The DRAPluginService constants of k8s.io/kubelet/pkg/apis/dra/v1 and /v1beta1 (types.go),
    // which kubelets compare supported_versions with; not the full gRPC service names.
    assertThat(DraNames.SERVICES).containsExactly("v1.DRAPlugin", "v1beta1.DRAPlugin");
  }
}
