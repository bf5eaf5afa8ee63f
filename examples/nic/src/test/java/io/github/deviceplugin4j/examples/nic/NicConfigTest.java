package io.github.deviceplugin4j.examples.nic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NicConfigTest {
  @TempDir Path dir;

  @Test
  void poolsComeFromTheFileWithDocumentedDefaults() throws Exception {
    Path file = dir.resolve("nic.properties");
    Files.writeString(
        file,
        """
        # two pools on the same PFs, told apart by driver
        pool.sriov_net.pf-names = ens1f0, ens1f1
        pool.sriov_net.vendors = 0x8086
        pool.sriov_net.devices = 1889
        pool.sriov_net.drivers = iavf
        pool.sriov_dpdk.pf-names = ens1f0,ens1f1
        pool.sriov_dpdk.drivers = vfio-pci
        """);

    NicConfig c = NicConfig.parse(new String[] {"--config=" + file}, Map.of());

    assertThat(c.root()).isEqualTo(Path.of("/"));
    assertThat(c.domain()).isEqualTo("nic.example.com");
    assertThat(c.devInfoDir()).isEqualTo(Path.of("/var/run/k8s.cni.cncf.io/devinfo/dp"));
    assertThat(c.pollInterval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.pools())
        .containsExactly(
            new NicPool(
                "sriov_dpdk",
                List.of("ens1f0", "ens1f1"),
                List.of(),
                List.of(),
                List.of("vfio-pci")),
            new NicPool(
                "sriov_net",
                List.of("ens1f0", "ens1f1"),
                List.of("8086"),
                List.of("1889"),
                List.of("iavf")));
    assertThat(c.resourceName(c.pools().get(1))).isEqualTo("nic.example.com/sriov_net");
  }

  @Test
  void environmentAndFlagsOverrideTheFile() throws Exception {
    Path file = dir.resolve("nic.properties");
    Files.writeString(file, "domain=file.example.com\npool.a.pf-names=eth0\n");

    NicConfig c =
        NicConfig.parse(
            new String[] {"--domain=flag.example.com", "--pool.b.pf-names=eth1"},
            Map.of(
                "NIC_CONFIG",
                file.toString(),
                "NIC_DEVINFO_DIR",
                "/tmp/devinfo",
                "NIC_DOMAIN",
                "env.example.com"));

    assertThat(c.domain()).isEqualTo("flag.example.com");
    assertThat(c.devInfoDir()).isEqualTo(Path.of("/tmp/devinfo"));
    assertThat(c.pools()).extracting(NicPool::name).containsExactly("a", "b");
  }

  @Test
  void mistakesAreNamed() throws Exception {
    Path file = dir.resolve("nic.properties");
    Files.writeString(file, "pool.a.pf-name=eth0\n");
    assertThatThrownBy(() -> NicConfig.parse(new String[] {"--config=" + file}, Map.of()))
        .hasMessageContaining("unknown pool setting 'pool.a.pf-name'");

    Files.writeString(file, "pool.a.drivers=iavf\n");
    assertThatThrownBy(() -> NicConfig.parse(new String[] {"--config=" + file}, Map.of()))
        .hasMessageContaining("pool a lists no PF");

    Files.writeString(file, "root=/\n");
    assertThatThrownBy(() -> NicConfig.parse(new String[] {"--config=" + file}, Map.of()))
        .hasMessageContaining("no pool configured");

    Files.writeString(file, "pool.-bad.pf-names=eth0\n");
    assertThatThrownBy(() -> NicConfig.parse(new String[] {"--config=" + file}, Map.of()))
        .hasMessageContaining("pool name '-bad'");

    assertThatThrownBy(
            () -> NicConfig.parse(new String[] {"--config=" + dir.resolve("none")}, Map.of()))
        .hasMessageContaining("cannot read the config file");
  }
}
