package io.github.deviceplugin4j.core.internal.registration;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.core.internal.registration.LegacyRegistration.AfterRegister;
import io.github.deviceplugin4j.core.internal.registration.LegacyRegistration.Check;
import io.github.deviceplugin4j.core.internal.registration.WatcherRegistration.Kick;
import io.github.deviceplugin4j.core.internal.transport.SocketFiles;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The decisions of the registration strategies, without sockets or timers. */
class RegistrationDecisionsTest {

  private static final SocketFiles.Identity KUBELET_A =
      new SocketFiles.Identity("1:100", FileTime.fromMillis(1));
  private static final SocketFiles.Identity KUBELET_B =
      new SocketFiles.Identity("1:101", FileTime.fromMillis(2));
  private static final long FALLBACK = Duration.ofSeconds(30).toNanos();

  // ------------------------------------------------------------------------------------ legacy

  @Test
  void legacy_kubeletSocketCreated_registersUnlessRegisteredWithThatVerySocket() {
    assertThat(LegacyRegistration.registeredWith(true, KUBELET_A, KUBELET_A)).isTrue();
    assertThat(LegacyRegistration.registeredWith(true, KUBELET_B, KUBELET_A)).isFalse();
    assertThat(LegacyRegistration.registeredWith(false, KUBELET_A, KUBELET_A)).isFalse();
    assertThat(LegacyRegistration.registeredWith(true, null, KUBELET_A)).isFalse();
  }

  @Test
  void legacy_safetyCheck_losesTheRegistrationWhenKubeletSockIsGone() {
    assertThat(LegacyRegistration.check(true, false, false, null, KUBELET_A))
        .isEqualTo(Check.KUBELET_GONE);
    assertThat(LegacyRegistration.check(true, true, false, null, KUBELET_A))
        .isEqualTo(Check.KUBELET_GONE);
  }

  @Test
  void legacy_safetyCheck_registersAgainWhenKubeletSockChangedWithoutAnEvent() {
    assertThat(LegacyRegistration.check(true, false, false, KUBELET_B, KUBELET_A))
        .isEqualTo(Check.KUBELET_CHANGED);
    // a Register in flight answers for the new kubelet already
    assertThat(LegacyRegistration.check(true, true, false, KUBELET_B, KUBELET_A))
        .isEqualTo(Check.NOTHING);
  }

  @Test
  void legacy_safetyCheck_registersWhenNotRegisteredAndNothingIsUnderWay() {
    assertThat(LegacyRegistration.check(false, false, false, KUBELET_A, null))
        .isEqualTo(Check.NOT_REGISTERED);
    assertThat(LegacyRegistration.check(false, false, false, null, null))
        .isEqualTo(Check.NOT_REGISTERED);
    assertThat(LegacyRegistration.check(false, true, false, KUBELET_A, null))
        .isEqualTo(Check.NOTHING);
    assertThat(LegacyRegistration.check(false, false, true, KUBELET_A, null))
        .isEqualTo(Check.NOTHING);
  }

  @Test
  void legacy_safetyCheck_leavesAHealthyRegistrationAlone() {
    assertThat(LegacyRegistration.check(true, false, false, KUBELET_A, KUBELET_A))
        .isEqualTo(Check.NOTHING);
  }

  @Test
  void legacy_afterRegister_registersOnceMoreWhenThePreviousInstanceLeftDuringTheCall() {
    assertThat(LegacyRegistration.afterRegister(true, false, false, false))
        .isEqualTo(AfterRegister.AGAIN_FOR_HANDOVER);
    assertThat(LegacyRegistration.afterRegister(true, true, true, true))
        .isEqualTo(AfterRegister.AGAIN_FOR_HANDOVER);
  }

  @Test
  void legacy_afterRegister_registersAgainWhenWhatTheKubeletAcceptedIsGone() {
    assertThat(LegacyRegistration.afterRegister(false, false, true, false))
        .isEqualTo(AfterRegister.LOST_AGAIN);
    assertThat(LegacyRegistration.afterRegister(false, true, false, true))
        .isEqualTo(AfterRegister.LOST_AGAIN);
  }

  @Test
  void legacy_afterRegister_isDoneWhenAnEventDuringTheCallChangedNothing() {
    assertThat(LegacyRegistration.afterRegister(false, true, false, false))
        .isEqualTo(AfterRegister.DONE);
    assertThat(LegacyRegistration.afterRegister(false, false, false, false))
        .isEqualTo(AfterRegister.DONE);
  }

  // ----------------------------------------------------------------------------------- watcher

  @Test
  void watcher_kick_waitsForAKubeletWhenThePluginDirShowsNone() {
    assertThat(WatcherRegistration.decide(true, false, false, true, FALLBACK * 2, FALLBACK))
        .isEqualTo(Kick.WAIT_FOR_KUBELET);
    assertThat(WatcherRegistration.decide(true, false, true, false, 0, FALLBACK))
        .isEqualTo(Kick.WAIT_FOR_KUBELET);
  }

  @Test
  void watcher_kick_leavesAKnownSocketToTheWatcherWhenTheKubeletCannotBeSeen() {
    assertThat(WatcherRegistration.decide(false, false, true, true, FALLBACK * 2, FALLBACK))
        .isEqualTo(Kick.LEAVE_TO_WATCHER);
  }

  @Test
  void watcher_kick_reCreatesTheSocketWhileTheWatcherIgnoresIt() {
    assertThat(WatcherRegistration.decide(true, true, false, true, FALLBACK - 1, FALLBACK))
        .isEqualTo(Kick.RECREATE);
    // without the plugin directory there is no kubelet.sock to tell a running kubelet
    assertThat(WatcherRegistration.decide(false, false, false, true, FALLBACK * 2, FALLBACK))
        .isEqualTo(Kick.RECREATE);
  }

  @Test
  void watcher_kick_fallsBackOnlyInAutoModeAfterTheWaitWhileAKubeletRuns() {
    assertThat(WatcherRegistration.decide(true, true, false, true, FALLBACK, FALLBACK))
        .isEqualTo(Kick.FALL_BACK);
    assertThat(WatcherRegistration.decide(true, true, false, false, FALLBACK * 2, FALLBACK))
        .isEqualTo(Kick.RECREATE);
  }

  @Test
  void watcher_kick_neverFallsBackOnceTheWatcherHasAskedForTheSocket() {
    assertThat(WatcherRegistration.decide(true, true, true, true, FALLBACK * 2, FALLBACK))
        .isEqualTo(Kick.RECREATE);
  }

  @Test
  void watcher_kickDelay_doublesUpToThirtyTimesTheBackoffCap() {
    Duration cap = Duration.ofSeconds(1);
    assertThat(WatcherRegistration.nextDelay(Duration.ofMillis(200), cap))
        .isEqualTo(Duration.ofMillis(400));
    assertThat(WatcherRegistration.nextDelay(Duration.ofSeconds(20), cap))
        .isEqualTo(Duration.ofSeconds(30));
    assertThat(WatcherRegistration.nextDelay(Duration.ofSeconds(30), cap))
        .isEqualTo(Duration.ofSeconds(30));
  }
}
