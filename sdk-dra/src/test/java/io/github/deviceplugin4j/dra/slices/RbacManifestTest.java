package io.github.deviceplugin4j.dra.slices;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The RBAC manifest grants exactly the verbs the SDK's API calls need. */
class RbacManifestTest {
  private static final Pattern RESOURCE_PATH =
      Pattern.compile(
          "/apis?(?:/[^/]+)?/v1(?:/namespaces/[^/]+)?/(?<resource>[a-z]+)(?<name>/[^/?]+)?"
              + "(?<sub>/[a-z]+)?(?<query>\\?.*)?");

  @Test
  void theClusterRoleGrantsExactlyWhatTheSdkCalls() throws Exception {
    Set<String> granted = granted();
    Set<String> used = used();

    assertThat(granted).isEqualTo(used);
  }

  private static Set<String> granted() throws Exception {
    Set<String> granted = new TreeSet<>();
    try (MockApiServer api = new MockApiServer();
        InputStream in = Files.newInputStream(Path.of("rbac.yaml"))) {
      List<HasMetadata> items = api.client.load(in).items();
      ClusterRole role =
          items.stream()
              .filter(ClusterRole.class::isInstance)
              .map(ClusterRole.class::cast)
              .findFirst()
              .orElseThrow();
      for (PolicyRule rule : role.getRules()) {
        for (String resource : rule.getResources()) {
          for (String verb : rule.getVerbs()) {
            granted.add(resource + ":" + verb);
          }
        }
      }
    }
    return granted;
  }

  /** Runs every API path of the SDK against the mock server and maps each request to RBAC. */
  private static Set<String> used() throws Exception {
    Set<String> used = new TreeSet<>();
    try (MockApiServer api = new MockApiServer()) {
      api.createNode("node-1");
      DeviceRequestAllocationResult result = new DeviceRequestAllocationResult();
      result.setDriver("fpga.example.com");
      result.setPool("node-1");
      result.setDevice("dev-0000");
      result.setRequest("fpga");
      ResourceClaim claim =
          api.client
              .dynamicResourceAllocation()
              .v1()
              .resourceClaims()
              .inNamespace("team-a")
              .resource(
                  new ResourceClaimBuilder()
                      .withNewMetadata()
                      .withName("c1")
                      .withNamespace("team-a")
                      .endMetadata()
                      .withNewSpec()
                      .endSpec()
                      .withNewStatus()
                      .withNewAllocation()
                      .withNewDevices()
                      .withResults(result)
                      .endDevices()
                      .endAllocation()
                      .endStatus()
                      .build())
              .create();
      while (api.server.takeRequest(1, TimeUnit.MILLISECONDS) != null) {
        // Forget the test's own set-up requests.
      }
      int setUp = api.server.getRequestCount();

      try (ResourceSlicePublisher publisher =
          ResourceSlicePublisher.builder(api.client, "fpga.example.com", "node-1")
              .coalesceDelay(Duration.ZERO)
              .build()) {
        publisher.publish(ResourceSlicePublisherTest.devices(200)).get(20, TimeUnit.SECONDS);
        publisher.publish(ResourceSlicePublisherTest.devices(100)).get(20, TimeUnit.SECONDS);
        publisher.removeAll().get(20, TimeUnit.SECONDS);
      }
      new ClaimCheck(api.client, "fpga.example.com", "node-1")
          .check("team-a", "c1", claim.getMetadata().getUid());
      try (ClaimStatusWriter status =
          ClaimStatusWriter.builder(api.client, "fpga.example.com", "node-1").build()) {
        status
            .set(
                new ClaimStatusWriter.ClaimRef("team-a", "c1", claim.getMetadata().getUid()),
                new io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatusBuilder()
                    .withDevice("dev-0000")
                    .build())
            .get(20, TimeUnit.SECONDS);
      }

      int calls = api.server.getRequestCount() - setUp;
      for (int i = 0; i < calls; i++) {
        RecordedRequest request = api.server.takeRequest(5, TimeUnit.SECONDS);
        Matcher m = RESOURCE_PATH.matcher(request.getPath());
        assertThat(m.matches()).as("an API path: %s", request.getPath()).isTrue();
        String resource = m.group("resource") + (m.group("sub") == null ? "" : m.group("sub"));
        boolean watch = m.group("query") != null && m.group("query").contains("watch=true");
        used.add(
            resource
                + ":"
                + (watch ? "watch" : verb(request.getMethod(), m.group("name") != null)));
      }
    }
    return used;
  }

  private static String verb(String method, boolean named) {
    return switch (method) {
      case "GET" -> named ? "get" : "list";
      case "POST" -> "create";
      case "PUT" -> "update";
      case "PATCH" -> "patch";
      case "DELETE" -> named ? "delete" : "deletecollection";
      default -> throw new AssertionError("unexpected method " + method);
    };
  }
}
