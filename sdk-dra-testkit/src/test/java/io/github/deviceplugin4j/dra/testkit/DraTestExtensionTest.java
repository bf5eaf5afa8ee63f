package io.github.deviceplugin4j.dra.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/** What {@code @DraTest} gives a test, and that it is all gone afterwards. */
class DraTestExtensionTest {

  /** What the fixtures saw, checked here after they ran. */
  static final List<DraCluster> SEEN = new CopyOnWriteArrayList<>();

  private static Events run(Class<?> fixture) {
    SEEN.clear();
    return EngineTestKit.engine("junit-jupiter")
        .selectors(selectClass(fixture))
        .execute()
        .testEvents();
  }

  @DraTest(nodeName = "worker-7")
  static class ParameterFixture {
    @Test
    void test(
        DraCluster cluster,
        FakeKubelet kubelet,
        KubernetesClient client,
        KubernetesMockServer server) {
      assertThat(cluster.kubelet()).isSameAs(kubelet);
      assertThat(cluster.client()).isSameAs(client);
      assertThat(cluster.apiServer()).isSameAs(server);
      assertThat(cluster.nodeName()).isEqualTo("worker-7");
      assertThat(client.nodes().withName("worker-7").get()).isNotNull();
      assertThat(kubelet.registryDir()).hasValue(cluster.registryDir());
      assertThat(cluster.registryDir()).isDirectory();
      assertThat(cluster.pluginDir("gpu.example.com").toString().length())
          .as("room for a socket name within the 108-byte limit")
          .isLessThan(70);
      SEEN.add(cluster);
    }
  }

  @DraTest
  static class FieldFixture {
    DraCluster cluster;
    FakeKubelet kubelet;
    KubernetesClient client;
    KubernetesMockServer server;
    String untouched = "kept";

    @BeforeEach
    void fieldsAreSetBeforeBeforeEachMethods() {
      assertThat(kubelet).isNotNull();
    }

    @Test
    void test() {
      assertThat(cluster.kubelet()).isSameAs(kubelet);
      assertThat(cluster.client()).isSameAs(client);
      assertThat(cluster.apiServer()).isSameAs(server);
      assertThat(cluster.nodeName()).isEqualTo("node-1");
      assertThat(untouched).isEqualTo("kept");
      SEEN.add(cluster);
    }
  }

  @DraTest
  static class FailingFixture {
    @Test
    void test(DraCluster cluster) {
      SEEN.add(cluster);
      throw new AssertionError("the test itself fails");
    }
  }

  @DraTest(nodeName = "worker-7")
  static class WipeFixture {
    private static ResourceSlice slice(String name, String node) {
      return new ResourceSliceBuilder()
          .withNewMetadata()
          .withName(name)
          .endMetadata()
          .withNewSpec()
          .withDriver("gpu.example.com")
          .withNodeName(node)
          .withNewPool()
          .withName(node)
          .withGeneration(1L)
          .withResourceSliceCount(1L)
          .endPool()
          .endSpec()
          .build();
    }

    @Test
    void test(DraCluster cluster) {
      var slices = cluster.client().dynamicResourceAllocation().v1().resourcesSlices();
      slices.resource(slice("mine", "worker-7")).create();
      slices.resource(slice("other", "worker-8")).create();

      var mark = cluster.kubelet().restart();

      assertThat(slices.list().getItems())
          .extracting(s -> s.getMetadata().getName())
          .containsExactly("other");
      assertThat(cluster.kubelet().events(mark))
          .anyMatch(e -> e.kind() == KubeletEvent.Kind.DRA_SLICES_WIPED);
      SEEN.add(cluster);
    }
  }

  @Test
  void theKubeletDeletesTheNodesResourceSlicesAtARestartLikeAKubeletFrom1_32() {
    run(WipeFixture.class).assertStatistics(s -> s.started(1).succeeded(1));
    assertThat(SEEN).hasSize(1);
  }

  @Test
  void aTestMethodGetsTheKubeletTheApiServerAndAClientAsParameters() {
    run(ParameterFixture.class).assertStatistics(s -> s.started(1).succeeded(1));
    assertThat(SEEN).hasSize(1);
  }

  @Test
  void fieldsOfTheSupportedTypesAreSetBeforeEachTest() {
    run(FieldFixture.class).assertStatistics(s -> s.started(1).succeeded(1));
    assertThat(SEEN).hasSize(1);
  }

  @Test
  void everythingIsClosedAndDeletedAfterThePassingTest() throws Exception {
    run(ParameterFixture.class).assertStatistics(s -> s.started(1).succeeded(1));
    assertClosed(SEEN.get(0));
  }

  @Test
  void everythingIsClosedAndDeletedAfterAFailingTestToo() throws Exception {
    run(FailingFixture.class).assertStatistics(s -> s.started(1).failed(1));
    assertClosed(SEEN.get(0));
  }

  private static void assertClosed(DraCluster cluster) throws Exception {
    assertThat(cluster.kubelet().verifyClosed()).isEmpty();
    assertThat(cluster.kubelet().kubeletSocket()).doesNotExist();
    assertThat(cluster.registryDir().getParent()).doesNotExist();
    URI url = URI.create(cluster.client().getMasterUrl().toString() + "api/v1/nodes");
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    assertThatThrownBy(
            () ->
                http.send(
                    HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString()))
        .as("the mock API server no longer answers")
        .isInstanceOf(java.io.IOException.class);
  }
}
