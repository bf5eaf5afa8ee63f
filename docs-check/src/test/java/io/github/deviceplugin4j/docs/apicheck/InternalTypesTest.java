package io.github.deviceplugin4j.docs.apicheck;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.deviceplugin4j.docs.apicheck.fixture.Leaky;
import io.github.deviceplugin4j.docs.apicheck.fixture.internal.Engine;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Internals stay internal: no public or protected signature of a published, non-internal type
 * exposes a type from an {@code .internal} package. The published modules are on this module's test
 * class path; any new one (sdk-micrometer, ...) is checked as soon as it is added there.
 */
class InternalTypesTest {

  @Test
  void noPublishedSignatureExposesAnInternalType() throws ClassNotFoundException {
    Set<String> names = ApiSurface.classNames(System.getProperty("java.class.path"));
    List<String> exposures = new ArrayList<>();
    int apiTypes = 0;
    for (String name : names) {
      Class<?> type = Class.forName(name, false, getClass().getClassLoader());
      if (ApiSurface.isApi(type)) {
        apiTypes++;
        exposures.addAll(ApiSurface.exposures(type));
      }
    }

    assertThat(names)
        .as("the published modules are on the class path, or this test checks nothing")
        .contains(
            "io.github.deviceplugin4j.core.DevicePluginHost",
            "io.github.deviceplugin4j.core.internal.engine.HostEngine",
            "io.github.deviceplugin4j.cdi.CdiSpec",
            "io.github.deviceplugin4j.testkit.FakeKubelet",
            "io.github.deviceplugin4j.dra.DraPluginHost",
            "io.github.deviceplugin4j.dra.testkit.DraCluster",
            "io.github.deviceplugin4j.testkit.spi.DraApiServerProvider",
            "io.github.deviceplugin4j.dra.conform.MockDraApiServerProvider")
        .noneMatch(name -> name.startsWith("io.github.deviceplugin4j.api."));
    assertThat(apiTypes).isGreaterThan(100);
    assertThat(exposures)
        .as(
            "public signatures that expose an internal type: move the type out of .internal, or"
                + " hide it behind an API type")
        .isEmpty();
  }

  @Test
  void theCheckNamesEveryExposureWithItsTypeAndMember() {
    assertThat(ApiSurface.exposures(Leaky.class))
        .containsExactlyInAnyOrder(
            Leaky.class.getName() + ": type parameter T bound exposes " + Engine.class.getName(),
            Leaky.class.getName() + ": implemented interface exposes " + Engine.class.getName(),
            Leaky.class.getName() + ": field engine exposes " + Engine.class.getName(),
            Leaky.class.getName() + ": field engines exposes " + Engine.class.getName(),
            Leaky.class.getName()
                + ": constructor(Engine) parameter 0 exposes "
                + Engine.class.getName(),
            Leaky.class.getName()
                + ": method engines() return type exposes "
                + Engine.class.getName(),
            Leaky.class.getName()
                + ": method run() type parameter E bound exposes "
                + Engine.class.getName(),
            Leaky.class.getName()
                + ": method run() throws clause exposes "
                + Engine.class.getName(),
            Leaky.class.getName()
                + ": method compareTo(List) parameter 0 exposes "
                + Engine.class.getName());
    assertThat(ApiSurface.exposures(Leaky.Open.class))
        .containsExactly(
            Leaky.Open.class.getName() + ": superclass exposes " + Engine.class.getName());
  }

  @Test
  void privateNestedAndInternalTypesAreNotApi() throws ClassNotFoundException {
    Class<?> secret = Class.forName(Leaky.class.getName() + "$Secret");

    assertThat(ApiSurface.isApi(secret)).isFalse();
    assertThat(ApiSurface.exposures(secret)).isEmpty();
    assertThat(ApiSurface.isApi(Engine.class)).isFalse();
    assertThat(ApiSurface.isApi(Leaky.Open.class)).isTrue();
  }
}
