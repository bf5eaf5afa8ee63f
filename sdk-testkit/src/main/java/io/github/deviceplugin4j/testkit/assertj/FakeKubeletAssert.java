package io.github.deviceplugin4j.testkit.assertj;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import io.github.deviceplugin4j.testkit.KubeletEvent;
import io.github.deviceplugin4j.testkit.Mark;
import io.github.deviceplugin4j.testkit.UnhealthyWindow;
import java.util.List;
import org.assertj.core.api.AbstractAssert;

/** AssertJ assertions on a {@link FakeKubelet}'s current state; failures include the event log. */
public final class FakeKubeletAssert extends AbstractAssert<FakeKubeletAssert, FakeKubelet> {

  FakeKubeletAssert(FakeKubelet actual) {
    super(actual, FakeKubeletAssert.class);
  }

  private void fail(String message, Object... args) {
    failWithMessage(message + "%n%s", append(args, actual.eventLog()));
  }

  private static Object[] append(Object[] args, Object last) {
    Object[] out = java.util.Arrays.copyOf(args, args.length + 1);
    out[args.length] = last;
    return out;
  }

  /**
   * A plugin for the resource is registered and connected now.
   *
   * @param resource the resource name
   * @return this
   */
  public FakeKubeletAssert hasRegistered(String resource) {
    isNotNull();
    if (actual.registration(resource).isEmpty()) {
      fail(
          "expected a connected plugin for %s; connected: %s",
          resource, actual.connectedResources());
    }
    return this;
  }

  /**
   * The resource's capacity (all devices).
   *
   * @param resource the resource name
   * @param expected the capacity
   * @return this
   */
  public FakeKubeletAssert hasCapacity(String resource, int expected) {
    isNotNull();
    int c = actual.capacity(resource);
    if (c != expected) {
      fail("expected capacity %s for %s but it is %s", expected, resource, c);
    }
    return this;
  }

  /**
   * The resource's allocatable count (healthy devices).
   *
   * @param resource the resource name
   * @param expected the allocatable count
   * @return this
   */
  public FakeKubeletAssert hasAllocatable(String resource, int expected) {
    isNotNull();
    int a = actual.allocatable(resource);
    if (a != expected) {
      fail(
          "expected %s allocatable %s but it is %s (devices: %s)",
          expected, resource, a, actual.devices(resource));
    }
    return this;
  }

  /**
   * No event so far has failed (no refused registration, failed RPC or broken stream).
   *
   * @return this
   */
  public FakeKubeletAssert hasNoFailures() {
    isNotNull();
    List<KubeletEvent> failed = actual.events().stream().filter(KubeletEvent::failed).toList();
    if (!failed.isEmpty()) {
      fail("expected no failed events but found %s", failed);
    }
    return this;
  }

  /**
   * Since the mark, the resource never became unable to take a new pod (allocatable 0 or its
   * endpoint stopped): what a plugin that re-registers while the kubelet runs must achieve.
   *
   * @param resource the resource name
   * @param since a mark from {@link FakeKubelet#mark()}
   * @return this
   */
  public FakeKubeletAssert hasNoUnhealthyWindow(String resource, Mark since) {
    isNotNull();
    List<UnhealthyWindow> windows = actual.unhealthyWindows(resource, since);
    if (!windows.isEmpty()) {
      fail(
          "expected no unhealthy window of %s after event #%s but found %s",
          resource, since.seq(), windows);
    }
    return this;
  }
}
