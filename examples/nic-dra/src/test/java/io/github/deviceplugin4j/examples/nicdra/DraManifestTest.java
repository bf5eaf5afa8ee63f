package io.github.deviceplugin4j.examples.nicdra;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.deviceplugin4j.examples.nic.NicConfig;
import io.github.deviceplugin4j.examples.testing.StrictYaml;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The NIC DRA driver's manifests parse with fabric8's model and refer to each other. */
class DraManifestTest {
  private static final Path DRA = Path.of("k8s/dra");

  private static List<HasMetadata> load(Path file) throws Exception {
    try (KubernetesClient client =
            new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build())
                .build();
        InputStream in = Files.newInputStream(file)) {
      return client.load(in).items();
    }
  }

  private static <T> T only(List<HasMetadata> items, Class<T> type) {
    return items.stream().filter(type::isInstance).map(type::cast).findFirst().orElseThrow();
  }

  @Test
  void rbacGrantsWhatTheSdkDocumentsIncludingTheClaimStatus() throws Exception {
    ClusterRole ours = only(load(DRA.resolve("rbac.yaml")), ClusterRole.class);
    ClusterRole sdk = only(load(Path.of("../../sdk-dra/rbac.yaml")), ClusterRole.class);

    assertThat(ours.getRules()).isEqualTo(sdk.getRules());
    assertThat(ours.getRules())
        .anySatisfy(r -> assertThat(r.getResources()).containsExactly("resourceclaims/status"));
  }

  @Test
  void theDaemonSetRunsAsTheServiceAccountWithTheConfigMapsPools(@TempDir Path tmp)
      throws Exception {
    ServiceAccount sa = only(load(DRA.resolve("rbac.yaml")), ServiceAccount.class);
    DaemonSet ds = StrictYaml.read(DRA.resolve("daemonset.yaml"), DaemonSet.class);
    ConfigMap cm = StrictYaml.read(DRA.resolve("configmap.yaml"), ConfigMap.class);

    var spec = ds.getSpec().getTemplate().getSpec();
    assertThat(spec.getServiceAccountName()).isEqualTo(sa.getMetadata().getName());
    assertThat(ds.getMetadata().getNamespace()).isEqualTo(sa.getMetadata().getNamespace());
    assertThat(spec.getHostNetwork()).isTrue();
    assertThat(spec.getVolumes())
        .anySatisfy(
            v -> assertThat(v.getConfigMap().getName()).isEqualTo(cm.getMetadata().getName()));
    List<String> args = spec.getContainers().get(0).getArgs();
    assertThat(args).contains("--config=/etc/deviceplugin4j/nic.properties");

    Path file = tmp.resolve("nic.properties");
    Files.writeString(file, cm.getData().get("nic.properties"));
    NicConfig config = NicConfig.parse(new String[] {"--config=" + file}, Map.of());
    assertThat(config.pools()).extracting(p -> p.name()).containsExactly("sriov_net");
  }

  @Test
  void theDeviceClassesSelectTheDriver_andOneServesTheDevicePluginsResource(@TempDir Path tmp)
      throws Exception {
    DeviceClass all = StrictYaml.read(DRA.resolve("deviceclass.yaml"), DeviceClass.class);
    DeviceClass extended =
        StrictYaml.read(DRA.resolve("deviceclass-extended-resource.yaml"), DeviceClass.class);
    ConfigMap cm = StrictYaml.read(DRA.resolve("configmap.yaml"), ConfigMap.class);
    Path file = tmp.resolve("nic.properties");
    Files.writeString(file, cm.getData().get("nic.properties"));
    NicConfig config = NicConfig.parse(new String[] {"--config=" + file}, Map.of());

    String selector = "device.driver == \"" + NicDraDriver.DEFAULT_DRIVER_NAME + "\"";
    assertThat(all.getSpec().getSelectors().get(0).getCel().getExpression()).isEqualTo(selector);
    assertThat(extended.getSpec().getSelectors().get(0).getCel().getExpression())
        .isEqualTo(selector);
    assertThat(extended.getSpec().getExtendedResourceName())
        .isEqualTo(config.resourceName(config.pools().get(0)));
  }

  @Test
  void everyManifestInTheDirectoryIsChecked() throws Exception {
    try (var files = Files.list(DRA)) {
      assertThat(files.map(p -> p.getFileName().toString()).sorted())
          .containsExactly(
              "configmap.yaml",
              "daemonset.yaml",
              "deviceclass-extended-resource.yaml",
              "deviceclass.yaml",
              "rbac.yaml");
    }
  }
}
