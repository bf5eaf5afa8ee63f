package io.github.deviceplugin4j.core.internal.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class DirectMemoryCheckTest {

  @Test
  void jdk25WithoutUnsafeAndWithoutNativeAccessIsWarnedAboutNamingTheFlag() {
    assertThat(DirectMemoryCheck.warning(25, false, Optional.of(false)))
        .hasValueSatisfying(
            w ->
                assertThat(w)
                    .startsWith("JDK 25 without native access for Netty")
                    .contains("--enable-native-access=ALL-UNNAMED")
                    .contains("Enable-Native-Access: ALL-UNNAMED"));
  }

  @Test
  void nativeAccessOrUnsafeOrAnOlderJdkNeedsNoWarning() {
    assertThat(DirectMemoryCheck.warning(25, false, Optional.of(true))).isEmpty();
    assertThat(DirectMemoryCheck.warning(26, true, Optional.of(false))).isEmpty();
    assertThat(DirectMemoryCheck.warning(17, false, Optional.empty())).isEmpty();
    assertThat(DirectMemoryCheck.warning(21, true, Optional.of(false))).isEmpty();
  }

  @Test
  void theJdkAnswersForTheModuleOnJdk22AndNewerOnly() {
    Optional<Boolean> answer = DirectMemoryCheck.nativeAccess(getClass().getModule());
    if (Runtime.version().feature() >= 22) {
      assertThat(answer).isPresent();
    } else {
      assertThat(answer).isEmpty();
    }
  }
}
