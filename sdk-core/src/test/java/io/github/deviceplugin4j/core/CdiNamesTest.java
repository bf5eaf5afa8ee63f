package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class CdiNamesTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "vendor.com/class=name",
        "vendor.example.com/fpga=port0",
        "nvidia.com/gpu=0",
        "nvidia.com/gpu=all",
        "v/c=n",
        "vendor-x_y.com/cl-as_s.1=GPU-1:2.3_4-5",
        "vendor.com/class=0",
      })
  void acceptsQualifiedNames(String name) {
    assertThat(CdiNames.isValid(name)).isTrue();
    assertThat(CdiNames.problem(name)).isNull();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "vendor.com/class           | has no '='",
        "vendor.com=name            | has no '/'",
        "/class=name                | vendor is empty",
        "vendor.com/=name           | class is empty",
        "vendor.com/class=          | device name is empty",
        "1vendor.com/class=name     | must start with a letter",
        "vendor.com-/class=name     | must end with a letter or digit",
        "vendor.com/1class=name     | must start with a letter",
        "vendor.com/cl/ass=name     | invalid character '/'",
        "ven dor.com/class=name     | invalid character ' '",
        "vendor.com/class=-name     | must start with a letter or digit",
        "vendor.com/class=name:     | must end with a letter or digit",
        "vendor.com/class=na=me     | invalid character '='",
        "vendor.com/class=na/me     | invalid character '/'",
      })
  void rejectsInvalidNamesSayingWhy(String name, String fragment) {
    assertThat(CdiNames.isValid(name)).isFalse();
    assertThat(CdiNames.problem(name)).contains(fragment);
  }

  @Test
  void buildsQualifiedNames() {
    assertThat(CdiNames.qualified("vendor.example.com", "fpga", "port0"))
        .isEqualTo("vendor.example.com/fpga=port0");
    assertThatThrownBy(() -> CdiNames.qualified("vendor.example.com", "fp ga", "port0"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("class \"fp ga\"");
  }

  @Test
  void nullAndEmptyAreInvalid() {
    assertThat(CdiNames.isValid(null)).isFalse();
    assertThat(CdiNames.isValid("")).isFalse();
  }
}
