package io.github.deviceplugin4j.testkit.assertj;

import io.github.deviceplugin4j.testkit.Allocation;
import io.github.deviceplugin4j.testkit.DeviceSpec;
import io.github.deviceplugin4j.testkit.MountSpec;
import java.util.List;
import org.assertj.core.api.AbstractAssert;

/** AssertJ assertions on an {@link Allocation}. */
public final class AllocationAssert extends AbstractAssert<AllocationAssert, Allocation> {

  AllocationAssert(Allocation actual) {
    super(actual, AllocationAssert.class);
  }

  /**
   * The response has no {@link Allocation#problems() problems}.
   *
   * @return this
   */
  public AllocationAssert isWellFormed() {
    isNotNull();
    List<String> problems = actual.problems();
    if (!problems.isEmpty()) {
      failWithMessage(
          "expected a well-formed allocation response but found:%n  %s",
          String.join("\n  ", problems));
    }
    return this;
  }

  /**
   * The allocation holds exactly these device IDs, in any order.
   *
   * @param ids the IDs
   * @return this
   */
  public AllocationAssert hasDeviceIds(String... ids) {
    isNotNull();
    if (actual.deviceIds().size() != ids.length || !actual.deviceIds().containsAll(List.of(ids))) {
      failWithMessage(
          "expected device IDs %s (any order) but got %s", List.of(ids), actual.deviceIds());
    }
    return this;
  }

  /**
   * The allocation holds this many devices.
   *
   * @param count the number of devices
   * @return this
   */
  public AllocationAssert hasDeviceCount(int count) {
    isNotNull();
    if (actual.deviceIds().size() != count) {
      failWithMessage("expected %s devices but got %s", count, actual.deviceIds());
    }
    return this;
  }

  /**
   * The response sets this environment variable to this value.
   *
   * @param name the variable
   * @param value the value
   * @return this
   */
  public AllocationAssert hasEnv(String name, String value) {
    isNotNull();
    if (!value.equals(actual.envs().get(name))) {
      failWithMessage("expected env %s=%s but the envs are %s", name, value, actual.envs());
    }
    return this;
  }

  /**
   * The response maps this host device node into the container at the same path, with these
   * permissions.
   *
   * @param path the device path
   * @param permissions e.g. {@code "rw"}
   * @return this
   */
  public AllocationAssert hasDeviceNode(String path, String permissions) {
    return hasDeviceSpec(new DeviceSpec(path, path, permissions));
  }

  /**
   * The response contains this device spec.
   *
   * @param spec the expected spec
   * @return this
   */
  public AllocationAssert hasDeviceSpec(DeviceSpec spec) {
    isNotNull();
    if (!actual.devices().contains(spec)) {
      failWithMessage("expected device spec %s but the devices are %s", spec, actual.devices());
    }
    return this;
  }

  /**
   * The response contains this mount.
   *
   * @param mount the expected mount
   * @return this
   */
  public AllocationAssert hasMount(MountSpec mount) {
    isNotNull();
    if (!actual.mounts().contains(mount)) {
      failWithMessage("expected mount %s but the mounts are %s", mount, actual.mounts());
    }
    return this;
  }

  /**
   * The response sets this annotation.
   *
   * @param key the key
   * @param value the value
   * @return this
   */
  public AllocationAssert hasAnnotation(String key, String value) {
    isNotNull();
    if (!value.equals(actual.annotations().get(key))) {
      failWithMessage(
          "expected annotation %s=%s but the annotations are %s", key, value, actual.annotations());
    }
    return this;
  }

  /**
   * The response names these CDI devices (among others).
   *
   * @param names fully qualified CDI names
   * @return this
   */
  public AllocationAssert hasCdiDevices(String... names) {
    isNotNull();
    if (!actual.cdiDevices().containsAll(List.of(names))) {
      failWithMessage(
          "expected CDI devices %s but the response names %s", List.of(names), actual.cdiDevices());
    }
    return this;
  }
}
