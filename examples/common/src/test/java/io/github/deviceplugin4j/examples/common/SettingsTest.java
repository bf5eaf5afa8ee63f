package io.github.deviceplugin4j.examples.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The parts of {@link Settings} one example alone does not show; each example's config test covers
 * the precedence of defaults, file, environment and flags.
 */
class SettingsTest {
  enum Colour {
    RED,
    GREEN,
    BLUE
  }

  @TempDir Path dir;

  static Map<String, String> defaults() {
    Map<String, String> d = new LinkedHashMap<>();
    d.put("root", "/");
    d.put("colour", "red");
    return d;
  }

  @Test
  void keysWithTheExtraPrefixAreAcceptedFromTheFileAndFlagsOnlyWhenThereIsOne() throws Exception {
    Path file = dir.resolve("x.properties");
    Files.writeString(file, "pool.a.pf-names=eth0\nroot=/file\n");
    String[] args = {"--config=" + file, "--pool.b.pf-names=eth1"};

    Settings s = Settings.parse(args, Map.of(), "X_", defaults(), "pool.");

    assertThat(s.extra())
        .containsExactly(
            Map.entry("pool.a.pf-names", "eth0"), Map.entry("pool.b.pf-names", "eth1"));
    assertThat(s.get("root")).isEqualTo("/file");
    assertThatThrownBy(() -> Settings.parse(args, Map.of(), "X_", defaults()))
        .hasMessageContaining("unknown option --pool.b.pf-names; known: [root, colour], config");
    assertThatThrownBy(
            () -> Settings.parse(new String[] {"--config=" + file}, Map.of(), "X_", defaults()))
        .hasMessageContaining("unknown key 'pool.a.pf-names' in " + file);
    assertThat(Settings.parse(new String[0], Map.of(), "X_", defaults()).extra()).isEmpty();
  }

  @Test
  void aDefaultConfigFileIsReadUnlessTheEnvironmentOrAFlagNamesAnother() throws Exception {
    Path byDefault = Files.writeString(dir.resolve("default.properties"), "root=/default\n");
    Path byEnv = Files.writeString(dir.resolve("env.properties"), "root=/env\n");
    Path byFlag = Files.writeString(dir.resolve("flag.properties"), "root=/flag\n");
    Map<String, String> d = defaults();
    d.put("config", byDefault.toString());
    Map<String, String> env = Map.of("X_CONFIG", byEnv.toString());

    assertThat(Settings.parse(new String[0], Map.of(), "X_", d).get("root")).isEqualTo("/default");
    assertThat(Settings.parse(new String[0], env, "X_", d).get("root")).isEqualTo("/env");
    assertThat(Settings.parse(new String[] {"--config=" + byFlag}, env, "X_", d).get("root"))
        .isEqualTo("/flag");
    assertThatThrownBy(
            () -> Settings.parse(new String[] {"--config=" + dir.resolve("none")}, env, "X_", d))
        .hasMessageContaining("cannot read config file " + dir.resolve("none"));
  }

  @Test
  void aChoiceIgnoresCaseAndAWrongOneListsEveryConstant() {
    Settings green =
        Settings.parse(new String[] {"--colour=Green"}, Map.of(), "X_", defaults(), null);
    Settings pink = Settings.parse(new String[] {"--colour=pink"}, Map.of(), "X_", defaults());

    assertThat(green.choice("colour", Colour.class)).isEqualTo(Colour.GREEN);
    assertThatThrownBy(() -> pink.choice("colour", Colour.class))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("colour must be 'red', 'green' or 'blue', was 'pink'");
  }
}
