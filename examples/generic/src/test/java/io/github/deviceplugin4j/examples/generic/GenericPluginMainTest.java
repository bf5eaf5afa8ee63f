package io.github.deviceplugin4j.examples.generic;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The command line of the device plugin's jar. */
class GenericPluginMainTest {

  @Test
  void draIsRefusedNamingTheJarThatHasIt() {
    assertThatThrownBy(() -> GenericPlugin.main(new String[] {"--dra", "--root=/"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("deviceplugin4j-example-generic-dra.jar");
  }

  @Test
  void anUnknownFlagIsRefusedListingTheKnownOnes() {
    assertThatThrownBy(() -> GenericPlugin.main(new String[] {"--rot=/host"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("unknown argument --rot=/host; known: --config, --root, --poll-interval");
  }

  @Test
  void aPollIntervalThatIsNotADurationIsRefusedNamingTheFlag() {
    assertThatThrownBy(() -> GenericPlugin.duration("poll-interval", "often"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("poll-interval")
        .hasMessageContaining("often");
  }
}
