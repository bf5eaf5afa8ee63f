package io.github.deviceplugin4j.testkit.assertj;

import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.FakeKubelet;

/** Entry points for the testkit's AssertJ assertions. */
public final class KubeletAssertions {
  private KubeletAssertions() {}

  /**
   * Assertions on an allocation.
   *
   * @param actual the allocation
   * @return the assertion object
   */
  public static AllocationAssert assertThat(Allocation actual) {
    return new AllocationAssert(actual);
  }

  /**
   * Assertions on a fake kubelet's current state.
   *
   * @param actual the kubelet
   * @return the assertion object
   */
  public static FakeKubeletAssert assertThat(FakeKubelet actual) {
    return new FakeKubeletAssert(actual);
  }
}
