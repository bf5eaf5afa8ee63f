package io.github.deviceplugin4j.examples.fpgadra;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.github.deviceplugin4j.examples.testing.Manifests;
import io.github.deviceplugin4j.examples.testing.StrictYaml;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The k8s/dra/ manifests are valid Kubernetes objects (fabric8's model, unknown fields rejected)
 * that refer to each other and to what the driver really does: names, the driver name, the service
 * account, the directories the driver uses.
 */
class DraManifestTest {
  static final Path DRA = Path.of("k8s/dra");
  static final String DRIVER = FpgaDraConfig.DEFAULT_DRIVER_NAME;

  /** The objects of a multi-document file, each read strictly as the given type. */
  private static <T> T document(Path file, int index, Class<T> type) throws IOException {
    String[] docs = Files.readString(file).split("(?m)^---$");
    return StrictYaml.read(docs[index], type);
  }

  private static DaemonSet daemonSet() throws IOException {
    return StrictYaml.read(DRA.resolve("daemonset.yaml"), DaemonSet.class);
  }

  @Test
  void rbacGrantsTheServiceAccountExactlyWhatTheSdkNeeds() throws Exception {
    Path rbac = DRA.resolve("rbac.yaml");
    Namespace ns = document(rbac, 0, Namespace.class);
    ServiceAccount sa = document(rbac, 1, ServiceAccount.class);
    ClusterRole role = document(rbac, 2, ClusterRole.class);
    ClusterRoleBinding binding = document(rbac, 3, ClusterRoleBinding.class);
    ClusterRole sdkRole = document(Path.of("../../sdk-dra/rbac.yaml"), 1, ClusterRole.class);

    assertThat(sa.getMetadata().getNamespace()).isEqualTo(ns.getMetadata().getName());
    assertThat(role.getRules()).isEqualTo(sdkRole.getRules());
    assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
    assertThat(binding.getRoleRef().getKind()).isEqualTo("ClusterRole");
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getKind()).isEqualTo("ServiceAccount");
              assertThat(s.getName()).isEqualTo(sa.getMetadata().getName());
              assertThat(s.getNamespace()).isEqualTo(sa.getMetadata().getNamespace());
            });
  }

  @Test
  void theReadmeBuildsAndPushesTheImageTheDaemonSetRuns() throws Exception {
    String image = daemonSet().getSpec().getTemplate().getSpec().getContainers().get(0).getImage();
    String readme = Files.readString(Path.of("README.md"));

    assertThat(readme)
        .contains("docker build -t " + image + " examples/fpga-dra")
        .contains("docker push " + image);
  }

  @Test
  void daemonSetRunsTheDriverWithItsServiceAccountAndDirectoriesMounted() throws Exception {
    ServiceAccount sa = document(DRA.resolve("rbac.yaml"), 1, ServiceAccount.class);
    DaemonSet ds = daemonSet();
    PodSpec spec = ds.getSpec().getTemplate().getSpec();
    Container c = spec.getContainers().get(0);

    assertThat(ds.getMetadata().getNamespace()).isEqualTo(sa.getMetadata().getNamespace());
    assertThat(spec.getServiceAccountName()).isEqualTo(sa.getMetadata().getName());
    assertThat(ds.getSpec().getSelector().getMatchLabels())
        .isEqualTo(ds.getSpec().getTemplate().getMetadata().getLabels());
    assertThat(c.getSecurityContext().getPrivileged()).isTrue();
    assertThat(c.getImage())
        .as("the DRA driver's own image, not the device plugin's")
        .isEqualTo("ghcr.io/example/deviceplugin4j-example-fpga-dra:0.1.0");
    assertThat(c.getArgs()).as("every argument is a setting").allMatch(a -> a.contains("="));
    Map<String, String> fieldRefs =
        c.getEnv().stream()
            .filter(e -> e.getValueFrom() != null)
            .collect(
                Collectors.toMap(
                    EnvVar::getName, e -> e.getValueFrom().getFieldRef().getFieldPath()));
    assertThat(fieldRefs)
        .containsEntry("NODE_NAME", "spec.nodeName")
        .containsEntry("FPGA_POD_UID", "metadata.uid");

    FpgaDraConfig config = configOf(c);
    Map<String, String> mounts = Manifests.hostPathMounts(spec, c);
    assertThat(mounts)
        .containsEntry("/var/lib/kubelet/plugins", "/var/lib/kubelet/plugins")
        .containsEntry("/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins_registry")
        .containsEntry("/var/run/cdi", "/var/run/cdi")
        .containsEntry("/host/sys", "/sys")
        .containsEntry("/host/dev", "/dev");
    assertThat(config.driverName()).isEqualTo(DRIVER);
    assertThat(config.root()).isEqualTo(Path.of("/host"));
    assertThat(config.pluginDir().startsWith(Path.of("/var/lib/kubelet/plugins")))
        .as("plugin dir %s inside the mounted plugins directory", config.pluginDir())
        .isTrue();
    assertThat(mounts).containsKey(config.registryDir().toString());
    assertThat(mounts).containsKey(config.cdiDir().toString());
    assertThat(config.podUid()).contains("pod-uid");
  }

  /** The driver's settings as the DaemonSet's pod would parse them. */
  private static FpgaDraConfig configOf(Container c) {
    Map<String, String> env = new HashMap<>();
    for (EnvVar e : c.getEnv()) {
      if (e.getValue() != null) {
        env.put(e.getName(), e.getValue());
      } else if (e.getValueFrom().getFieldRef().getFieldPath().equals("spec.nodeName")) {
        env.put(e.getName(), "node-1");
      } else {
        env.put(e.getName(), "pod-uid");
      }
    }
    return FpgaDraConfig.parse(c.getArgs().toArray(String[]::new), env);
  }

  @Test
  void deviceClassSelectsTheDriversDevices() throws Exception {
    DeviceClass dc = StrictYaml.read(DRA.resolve("deviceclass.yaml"), DeviceClass.class);

    assertThat(dc.getApiVersion()).isEqualTo("resource.k8s.io/v1");
    assertThat(dc.getSpec().getSelectors())
        .singleElement()
        .satisfies(
            s ->
                assertThat(s.getCel().getExpression())
                    .isEqualTo("device.driver == \"" + DRIVER + "\""));
  }

  @Test
  void theExtendedResourceClassServesTheDevicePluginsResourceNameFromThePorts() throws Exception {
    DeviceClass dc =
        StrictYaml.read(DRA.resolve("deviceclass-extended-resource.yaml"), DeviceClass.class);

    String afu = "d8424dc4a4a3c413f89e433683f9040b";
    assertThat(dc.getSpec().getExtendedResourceName())
        .isEqualTo(
            io.github.deviceplugin4j.examples.fpga.FpgaConfig.defaults(Path.of("/"))
                .resourceName(afu));
    String cel = dc.getSpec().getSelectors().get(0).getCel().getExpression();
    assertThat(cel)
        .contains("device.driver == \"" + DRIVER + "\"")
        .contains(".kind == \"port\"")
        .contains("." + FpgaDraDriver.AFU_ID + " == \"" + afu + "\"");
  }

  @Test
  void claimTemplateAsksTheClassForAPortByTheAttributeTheDriverPublishes() throws Exception {
    DeviceClass dc = StrictYaml.read(DRA.resolve("deviceclass.yaml"), DeviceClass.class);
    ResourceClaimTemplate t =
        StrictYaml.read(DRA.resolve("resourceclaimtemplate.yaml"), ResourceClaimTemplate.class);

    assertThat(t.getApiVersion()).isEqualTo("resource.k8s.io/v1");
    ExactDeviceRequest exactly =
        t.getSpec().getSpec().getDevices().getRequests().get(0).getExactly();
    assertThat(exactly.getDeviceClassName()).isEqualTo(dc.getMetadata().getName());
    assertThat(exactly.getCount()).isEqualTo(1L);
    String cel = exactly.getSelectors().get(0).getCel().getExpression();
    Matcher m =
        Pattern.compile(
                Pattern.quote("device.attributes[\"" + DRIVER + "\"]." + FpgaDraDriver.AFU_ID)
                    + " == \"([0-9a-f]{32})\"")
            .matcher(cel);
    assertThat(m.matches()).as(cel).isTrue();
  }

  @Test
  void podUsesTheTemplateInItsNamespaceAndItsContainerTheClaim() throws Exception {
    ResourceClaimTemplate t =
        StrictYaml.read(DRA.resolve("resourceclaimtemplate.yaml"), ResourceClaimTemplate.class);
    Pod pod = StrictYaml.read(DRA.resolve("pod.yaml"), Pod.class);

    assertThat(pod.getMetadata().getNamespace()).isEqualTo(t.getMetadata().getNamespace());
    List<PodResourceClaim> claims = pod.getSpec().getResourceClaims();
    assertThat(claims)
        .singleElement()
        .satisfies(
            c -> assertThat(c.getResourceClaimTemplateName()).isEqualTo(t.getMetadata().getName()));
    assertThat(pod.getSpec().getContainers().get(0).getResources().getClaims())
        .extracting(c -> c.getName())
        .containsExactly(claims.get(0).getName());
  }

  @Test
  void everyManifestInTheDirectoryIsChecked() throws Exception {
    try (var files = Files.list(DRA)) {
      assertThat(files.map(p -> p.getFileName().toString()).sorted())
          .containsExactlyElementsOf(
              Arrays.asList(
                  "daemonset.yaml",
                  "deviceclass-extended-resource.yaml",
                  "deviceclass.yaml",
                  "pod.yaml",
                  "rbac.yaml",
                  "resourceclaimtemplate.yaml"));
    }
  }
}
