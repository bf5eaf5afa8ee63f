package io.github.deviceplugin4j.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ResourceNamesTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "example.com/ok_name.1",
        "vendor.example.com/fpga",
        "a/b",
        "example.com/123456789012345678901234567890123456789012345678901234567890123",
      })
  void acceptsWhatTheKubeletAccepts(String name) {
    assertThat(ResourceNames.isValid(name)).isTrue();
    assertThatCode(() -> ResourceNames.check(name)).doesNotThrowAnyException();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "no-domain                 | must contain '/'",
        "kubernetes.io/foo         | kubernetes.io domain",
        "sub.kubernetes.io/foo     | kubernetes.io domain",
        "requests.example.com/x    | must not start with \"requests.\"",
        "Example.com/foo           | not a DNS-1123 subdomain",
        "example.com/-bad          | start and end with a letter or digit",
        "example.com/a/b           | exactly one '/'",
        "/foo                      | domain before '/' is empty",
        "example.com/              | name after '/' is empty",
        "example.com/1234567890123456789012345678901234567890123456789012345678901234 | 64 characters",
      })
  void rejectsWhatTheKubeletRejects(String name, String fragment) {
    assertThat(ResourceNames.isValid(name)).isFalse();
    assertThatThrownBy(() -> ResourceNames.check(name))
        .isInstanceOf(ConfigurationException.class)
        .hasMessageContaining("invalid resource name \"" + name + "\"")
        .hasMessageContaining(fragment);
  }

  @org.junit.jupiter.api.Test
  void domainIsLimitedBecauseTheKubeletChecksItWithTheRequestsPrefix() {
    String label = "a".repeat(60);
    String domain244 = String.join(".", label, label, label, "a".repeat(61)); // 244 chars
    assertThat(domain244).hasSize(244);
    assertThat(ResourceNames.isValid(domain244 + "/x")).isTrue();
    assertThat(ResourceNames.problems(domain244 + "a/x")).anyMatch(p -> p.contains("at most 244"));
  }
}
