package io.github.deviceplugin4j.dra.slices;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.github.deviceplugin4j.dra.testkit.DraScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ClaimCheckTest {
  private static final String DRIVER = "fpga.example.com";
  private static final String NODE = "node-1";

  private MockApiServer api;
  private ClaimCheck check;
  private DraScheduler scheduler;

  @BeforeEach
  void start() {
    api = new MockApiServer();
    check = new ClaimCheck(api.client, DRIVER, NODE);
    scheduler = DraScheduler.forNode(api.client, NODE);
  }

  @AfterEach
  void stop() {
    api.close();
  }

  private static String uid(ResourceClaim claim) {
    return claim.getMetadata().getUid();
  }

  @Test
  void aClaimAllocatedHereGivesItsDevicesForThisDriverAndPoolOnly() {
    ResourceClaim claim =
        scheduler.assign(
            "team-a",
            "c1",
            DraScheduler.device("fpga", DRIVER, NODE, "port0"),
            DraScheduler.device("fpga", DRIVER, NODE, "port1"),
            DraScheduler.device("nic", "nic.example.com", NODE, "eth0"));

    ClaimCheck.Result result = check.check("team-a", "c1", uid(claim));

    assertThat(result.isAllocated()).isTrue();
    assertThat(result.error()).isNull();
    assertThat(result.devices())
        .containsExactly(
            new ClaimCheck.AllocatedDevice("fpga", NODE, "port0", false),
            new ClaimCheck.AllocatedDevice("fpga", NODE, "port1", false));
    assertThat(result.claim().getMetadata().getName()).isEqualTo("c1");
  }

  @Test
  void anUnallocatedClaimIsRefused() {
    ResourceClaim claim = scheduler.assign("team-a", "c2");

    ClaimCheck.Result result = check.check("team-a", "c2", uid(claim));

    assertThat(result.isAllocated()).isFalse();
    assertThat(result.devices()).isEmpty();
    assertThat(result.error()).isEqualTo("claim team-a/c2 is not allocated");
  }

  @Test
  void aClaimOfAnotherDriverIsRefusedNamingIt() {
    ResourceClaim claim =
        scheduler.assign(
            "team-a", "c3", DraScheduler.device("gpu", "gpu.example.com", NODE, "gpu0"));

    assertThat(check.check("team-a", "c3", uid(claim)).error())
        .isEqualTo("claim team-a/c3 is allocated to driver gpu.example.com, not to " + DRIVER);
  }

  @Test
  void aClaimAllocatedOnAnotherNodesPoolIsRefusedNamingBoth() {
    ResourceClaim claim =
        scheduler.assign("team-a", "c4", DraScheduler.device("fpga", DRIVER, "node-2", "port0"));

    assertThat(check.check("team-a", "c4", uid(claim)).error())
        .isEqualTo("claim team-a/c4 is allocated on pool node-2, this node is node-1");
  }

  @Test
  void aReCreatedClaimIsRefusedByItsUid() {
    scheduler.assign("team-a", "c5", DraScheduler.device("fpga", DRIVER, NODE, "port0"));

    assertThat(check.check("team-a", "c5", "uid-of-the-old-claim").error())
        .startsWith("claim team-a/c5 has uid ")
        .contains("uid-of-the-old-claim")
        .endsWith("uid differs: the claim was re-created");
  }

  @Test
  void aMissingClaimIsRefused() {
    assertThat(check.check("team-a", "gone", "u").error())
        .isEqualTo("claim team-a/gone does not exist: it was deleted before prepare");
  }

  @Test
  void aForbiddenReadNamesTheRbacRuleToAdd() {
    api.server
        .expect()
        .get()
        .withPath("/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/c6")
        .andReturn(
            403,
            new StatusBuilder()
                .withStatus("Failure")
                .withCode(403)
                .withReason("Forbidden")
                .withMessage("resourceclaims \"c6\" is forbidden")
                .build())
        .once();

    ClaimCheck.Result result = check.check("team-a", "c6", "u");

    assertThat(result.isAllocated()).isFalse();
    assertThat(result.error())
        .contains("cannot read claim team-a/c6", "HTTP 403", "get on resourceclaims");
  }

  @Test
  void adminAccessIsReported() {
    DeviceRequestAllocationResult r = DraScheduler.device("mon", DRIVER, NODE, "port0");
    r.setAdminAccess(true);
    ResourceClaim claim = scheduler.assign("team-a", "c7", r);

    assertThat(check.check("team-a", "c7", uid(claim)).devices())
        .extracting(ClaimCheck.AllocatedDevice::adminAccess)
        .containsExactly(true);
  }
}
