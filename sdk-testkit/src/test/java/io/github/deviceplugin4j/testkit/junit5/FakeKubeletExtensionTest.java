package io.github.deviceplugin4j.testkit.junit5;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.testkit.engine.EventConditions.event;
import static org.junit.platform.testkit.engine.EventConditions.finishedSuccessfully;
import static org.junit.platform.testkit.engine.EventConditions.finishedWithFailure;
import static org.junit.platform.testkit.engine.EventConditions.test;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.instanceOf;
import static org.junit.platform.testkit.engine.TestExecutionResultConditions.message;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.plugin.TestPlugin;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Events;

/** Runs small scenario classes (nested, so surefire does not run them alone) with EngineTestKit. */
class FakeKubeletExtensionTest {
  // Generous on purpose: only a failing test waits this long, and the plugin's own waits on
  // these paths (registration backoff capped at 10 s, the kubelet's 10 s dial-back) must fit with
  // room to spare on a machine whose cores are busy with other work.
  static final Duration WAIT = Duration.ofSeconds(60);
  static final String RES = "example.com/ext";

  /** Plugins a scenario leaked on purpose; closed by the outer test. */
  static final List<TestPlugin> LEAKED = new ArrayList<>();

  /** Where scenarios saw their kubelet, to check the extension cleaned up. */
  static final List<Path> DIRS = new ArrayList<>();

  @AfterEach
  void closeLeaked() {
    LEAKED.forEach(TestPlugin::close);
    LEAKED.clear();
    DIRS.clear();
  }

  private static Events run(Class<?> scenario) {
    return EngineTestKit.engine("junit-jupiter")
        .selectors(selectClass(scenario))
        .execute()
        .testEvents();
  }

  @Test
  void aTestThatClosesItsPluginPassesAndTheDirectoryIsDeleted() {
    Events events = run(CleanScenario.class);
    events.assertStatistics(s -> s.succeeded(1).failed(0));
    assertThat(DIRS).singleElement().satisfies(d -> assertThat(d).doesNotExist());
    assertThat(DIRS.get(0).toString().length()).isLessThan(60);
  }

  @Test
  void aPluginStillConnectedAfterTheTestFailsIt() {
    Events events = run(LeakyScenario.class);
    events
        .assertThatEvents()
        .haveExactly(
            1,
            event(
                test("leaksAConnection"),
                finishedWithFailure(
                    instanceOf(AssertionError.class),
                    message(m -> m.contains("plugin for " + RES + " is still connected")))));
    assertThat(DIRS).singleElement().satisfies(d -> assertThat(d).doesNotExist());
  }

  @Test
  void aSocketLeftInThePluginDirectoryFailsTheTest() {
    Events events = run(SocketLeftScenario.class);
    events
        .assertThatEvents()
        .haveExactly(
            1,
            event(
                test("leavesASocket"),
                finishedWithFailure(message(m -> m.contains("socket left behind: ")))));
  }

  @Test
  void theLeakCheckCanBeTurnedOff() {
    run(LeakAllowedScenario.class).assertStatistics(s -> s.succeeded(1).failed(0));
  }

  @Test
  void theAnnotationInjectsAFreshKubeletPerTestWithItsSettings() {
    Events events = run(AnnotatedScenario.class);
    events.assertStatistics(s -> s.succeeded(2).failed(0));
    events.assertThatEvents().haveExactly(2, event(test(), finishedSuccessfully()));
    assertThat(DIRS).hasSize(2).doesNotHaveDuplicates();
  }

  @Test
  void aFailingTestIsNotMaskedByTheLeakCheck() {
    Events events = run(FailingScenario.class);
    events
        .assertThatEvents()
        .haveExactly(
            1, event(test("fails"), finishedWithFailure(message("the test's own failure"))));
  }

  // --- scenarios -------------------------------------------------------------------------------

  static class CleanScenario {
    @RegisterExtension FakeKubeletExtension kubelet = FakeKubeletExtension.create();

    @Test
    void registersAndCloses() {
      FakeKubelet k = kubelet.get();
      DIRS.add(k.pluginDir().getParent());
      try (TestPlugin p = new TestPlugin(RES, k.pluginDir().resolve("p.sock")).start()) {
        p.register(k.kubeletSocket());
        k.awaitRegistration(RES, WAIT);
      }
    }
  }

  static class LeakyScenario {
    @RegisterExtension FakeKubeletExtension kubelet = FakeKubeletExtension.create();

    @Test
    void leaksAConnection() {
      FakeKubelet k = kubelet.get();
      DIRS.add(k.pluginDir().getParent());
      TestPlugin p = new TestPlugin(RES, k.pluginDir().resolve("p.sock")).start();
      LEAKED.add(p);
      p.register(k.kubeletSocket());
      k.awaitRegistration(RES, WAIT);
    }
  }

  static class SocketLeftScenario {
    @RegisterExtension FakeKubeletExtension kubelet = FakeKubeletExtension.create();

    @Test
    void leavesASocket() throws Exception {
      Path p = kubelet.get().pluginDir().resolve("stale.sock");
      try (ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
        ch.bind(UnixDomainSocketAddress.of(p));
      }
      assertThat(Files.exists(p)).isTrue();
    }
  }

  static class LeakAllowedScenario {
    @RegisterExtension
    FakeKubeletExtension kubelet = FakeKubeletExtension.create().withoutLeakCheck();

    @Test
    void leaks() {
      FakeKubelet k = kubelet.get();
      TestPlugin p = new TestPlugin(RES, k.pluginDir().resolve("p.sock")).start();
      LEAKED.add(p);
      p.register(k.kubeletSocket());
      k.awaitRegistration(RES, WAIT);
    }
  }

  @FakeKubeletTest(registry = true, podResources = true, gracePeriodMillis = 100)
  static class AnnotatedScenario {
    @Test
    void first(FakeKubelet kubelet) {
      check(kubelet);
    }

    @Test
    void second(FakeKubelet kubelet) {
      check(kubelet);
    }

    private static void check(FakeKubelet kubelet) {
      DIRS.add(kubelet.pluginDir());
      assertThat(kubelet.registryDir()).isPresent();
      assertThat(kubelet.podResourcesSocket()).isPresent();
      assertThat(Files.exists(kubelet.kubeletSocket())).isTrue();
    }
  }

  static class FailingScenario {
    @RegisterExtension FakeKubeletExtension kubelet = FakeKubeletExtension.create();

    @Test
    void fails() {
      TestPlugin p = new TestPlugin(RES, kubelet.get().pluginDir().resolve("p.sock")).start();
      LEAKED.add(p);
      p.register(kubelet.get().kubeletSocket());
      throw new AssertionError("the test's own failure");
    }
  }
}
