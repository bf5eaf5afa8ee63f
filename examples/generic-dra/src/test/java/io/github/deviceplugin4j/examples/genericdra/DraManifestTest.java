package io.github.deviceplugin4j.examples.genericdra;

import static io.github.deviceplugin4j.examples.genericdra.DraTestNode.DRIVER;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ExactDeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.github.deviceplugin4j.core.Sharing;
import io.github.deviceplugin4j.examples.generic.GenericBackend;
import io.github.deviceplugin4j.examples.generic.GenericConfig;
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
import org.junit.jupiter.api.Test;

/**
 * The k8s/dra/ manifests are valid Kubernetes objects (fabric8's model, unknown fields rejected)
 * that refer to each other and to what the driver really does: names, the driver name, the
 * attributes it publishes, the config it reads, the directories it uses.
 */
class DraManifestTest {
  static final Path DRA = Path.of("k8s/dra");

  /** The objects of a multi-document file, each read strictly as the given type. */
  private static <T> T document(Path file, int index, Class<T> type) throws IOException {
    String[] docs = Files.readString(file).split("(?m)^---$");
    return StrictYaml.read(docs[index], type);
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
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getName()).isEqualTo(sa.getMetadata().getName());
              assertThat(s.getNamespace()).isEqualTo(sa.getMetadata().getNamespace());
            });
  }

  @Test
  void daemonSetRunsTheDriverWithDraItsConfigAndDirectoriesMounted() throws Exception {
    ServiceAccount sa = document(DRA.resolve("rbac.yaml"), 1, ServiceAccount.class);
    ConfigMap cm = StrictYaml.read(DRA.resolve("configmap.yaml"), ConfigMap.class);
    DaemonSet ds = StrictYaml.read(DRA.resolve("daemonset.yaml"), DaemonSet.class);
    PodSpec spec = ds.getSpec().getTemplate().getSpec();
    Container c = spec.getContainers().get(0);

    assertThat(ds.getMetadata().getNamespace()).isEqualTo(sa.getMetadata().getNamespace());
    assertThat(spec.getServiceAccountName()).isEqualTo(sa.getMetadata().getName());
    assertThat(ds.getSpec().getSelector().getMatchLabels())
        .isEqualTo(ds.getSpec().getTemplate().getMetadata().getLabels());
    assertThat(c.getSecurityContext().getPrivileged()).isTrue();
    assertThat(c.getImage()).isEqualTo("ghcr.io/example/deviceplugin4j-example-generic-dra:0.1.0");
    assertThat(c.getArgs()).contains("--dra");

    GenericDraDriver.Options options = optionsOf(c);
    Map<String, String> mounts = Manifests.hostPathMounts(spec, c);
    assertThat(mounts)
        .containsEntry("/var/lib/kubelet/plugins", "/var/lib/kubelet/plugins")
        .containsEntry("/var/run/cdi", "/var/run/cdi")
        .containsEntry("/host/sys", "/sys")
        .containsEntry("/host/dev", "/dev");
    assertThat(options.driverName()).isEqualTo(DRIVER);
    assertThat(options.root()).isEqualTo(Path.of("/host"));
    assertThat(options.pluginDir().startsWith(Path.of("/var/lib/kubelet/plugins"))).isTrue();
    assertThat(mounts).containsKey(options.registryDir().toString());
    assertThat(mounts).containsKey(options.cdiDir().toString());
    assertThat(options.podUid()).contains("pod-uid");

    // --config names a key of the ConfigMap, mounted where the flag says.
    VolumeMount mount =
        c.getVolumeMounts().stream()
            .filter(m -> Path.of(m.getMountPath()).equals(options.configFile().getParent()))
            .findFirst()
            .orElseThrow();
    Volume volume =
        spec.getVolumes().stream()
            .filter(v -> v.getName().equals(mount.getName()))
            .findFirst()
            .orElseThrow();
    assertThat(volume.getConfigMap().getName()).isEqualTo(cm.getMetadata().getName());
    assertThat(cm.getMetadata().getNamespace()).isEqualTo(ds.getMetadata().getNamespace());
    assertThat(cm.getData()).containsKey(options.configFile().getFileName().toString());
  }

  /** The driver's settings as the DaemonSet's pod would parse them. */
  private static GenericDraDriver.Options optionsOf(Container c) {
    Map<String, String> env = new HashMap<>();
    for (EnvVar e : c.getEnv()) {
      String path = e.getValueFrom().getFieldRef().getFieldPath();
      env.put(e.getName(), path.equals("spec.nodeName") ? "node-1" : "pod-uid");
    }
    return GenericDraDriver.Options.parse(c.getArgs().toArray(String[]::new), env);
  }

  private static GenericConfig config() throws Exception {
    ConfigMap cm = StrictYaml.read(DRA.resolve("configmap.yaml"), ConfigMap.class);
    return GenericConfig.parse(cm.getData().get("config.yaml"));
  }

  @Test
  void configMapHoldsAConfigTheParserAccepts_withTheNicSharedByCount() throws Exception {
    assertThat(config().resources()).isNotEmpty();
    assertThat(config().resources())
        .filteredOn(r -> r.name().endsWith("/nic"))
        .singleElement()
        .satisfies(r -> assertThat(r.sharing()).isEqualTo(Sharing.replicas(4)));
  }

  @Test
  void theExtendedResourceClassServesTheDevicePluginsResourceName() throws Exception {
    io.fabric8.kubernetes.api.model.resource.v1.DeviceClass dc =
        StrictYaml.read(
            DRA.resolve("deviceclass-extended-resource.yaml"),
            io.fabric8.kubernetes.api.model.resource.v1.DeviceClass.class);
    String resource =
        config().resources().stream()
            .filter(r -> r.name().endsWith("/yubikey"))
            .findFirst()
            .orElseThrow()
            .name();

    assertThat(dc.getSpec().getExtendedResourceName()).isEqualTo(resource);
    assertThat(dc.getSpec().getSelectors().get(0).getCel().getExpression())
        .contains("device.driver == \"" + GenericDraDriver.DEFAULT_DRIVER_NAME + "\"")
        .contains("." + GenericDraBackend.RESOURCE + " == \"" + resource + "\"");
  }

  @Test
  void deviceClassSelectsOneConfiguredResourceOfTheDriver() throws Exception {
    DeviceClass dc = StrictYaml.read(DRA.resolve("deviceclass.yaml"), DeviceClass.class);

    assertThat(dc.getApiVersion()).isEqualTo("resource.k8s.io/v1");
    String cel = dc.getSpec().getSelectors().get(0).getCel().getExpression();
    Matcher m =
        Pattern.compile(
                Pattern.quote("device.driver == \"" + DRIVER + "\" && device.attributes[\"")
                    + Pattern.quote(DRIVER + "\"]." + GenericDraBackend.RESOURCE + " == \"")
                    + "([^\"]+)\"")
            .matcher(cel);
    assertThat(m.matches()).as(cel).isTrue();
    assertThat(config().resources()).extracting(GenericConfig.Resource::name).contains(m.group(1));
  }

  @Test
  void claimTemplateAsksTheClassForADeviceByAnAttributeTheDriverPublishes() throws Exception {
    DeviceClass dc = StrictYaml.read(DRA.resolve("deviceclass.yaml"), DeviceClass.class);
    ResourceClaimTemplate t =
        StrictYaml.read(DRA.resolve("resourceclaimtemplate.yaml"), ResourceClaimTemplate.class);

    ExactDeviceRequest exactly =
        t.getSpec().getSpec().getDevices().getRequests().get(0).getExactly();
    assertThat(exactly.getDeviceClassName()).isEqualTo(dc.getMetadata().getName());
    assertThat(exactly.getCount()).isEqualTo(1L);
    // serial is an optional attribute: reading it unchecked on a device without it aborts the
    // allocation, so the selector checks it with has() first.
    String serial = "device.attributes[\"" + DRIVER + "\"]." + GenericBackend.SERIAL;
    assertThat(exactly.getSelectors().get(0).getCel().getExpression())
        .matches(Pattern.quote("has(" + serial + ") && " + serial) + " == \"[^\"]+\"");
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
                  "configmap.yaml",
                  "daemonset.yaml",
                  "deviceclass-extended-resource.yaml",
                  "deviceclass.yaml",
                  "pod.yaml",
                  "rbac.yaml",
                  "resourceclaimtemplate.yaml"));
    }
  }
}
