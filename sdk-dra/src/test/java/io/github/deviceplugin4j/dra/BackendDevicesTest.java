package io.github.deviceplugin4j.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.github.deviceplugin4j.core.Device;
import io.github.deviceplugin4j.core.DeviceNode;
import io.github.deviceplugin4j.core.Health;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class BackendDevicesTest {
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");

  @Test
  void anIdThatIsADnsLabelIsTheDeviceName() {
    assertThat(BackendDevices.deviceName("port0")).isEqualTo("port0");
    assertThat(BackendDevices.deviceName("gpu-7")).isEqualTo("gpu-7");
  }

  @Test
  void anyOtherIdIsSanitisedWithAStableHashSuffix() {
    String name = BackendDevices.deviceName("GPU_0");

    assertThat(name).startsWith("gpu-0-").hasSize("gpu-0-".length() + 8).matches(DNS_LABEL);
    assertThat(BackendDevices.deviceName("GPU_0")).isEqualTo(name);
    assertThat(BackendDevices.deviceName("gpu_0")).isNotEqualTo(name);
    assertThat(BackendDevices.deviceName("gpu-0")).isEqualTo("gpu-0");
  }

  @Test
  void longAndPunctuationOnlyIdsStillGiveValidNames() {
    String longId = "0000:3b:00.0/" + "x".repeat(80);
    assertThat(BackendDevices.deviceName(longId)).hasSizeLessThanOrEqualTo(63).matches(DNS_LABEL);
    assertThat(BackendDevices.deviceName("___")).startsWith("d-").matches(DNS_LABEL);
    assertThat(BackendDevices.deviceName("-a-")).matches(DNS_LABEL);
  }

  @Test
  void anEmptyIdIsRefusedWithTheReason() {
    assertThatThrownBy(() -> BackendDevices.deviceName(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("empty");
  }

  @Test
  void singleNumaNodeBecomesAnIntAttributeAndVendorFieldsAreAdded() {
    BackendDevices mapping =
        BackendDevices.builder()
            .attributes(
                d ->
                    Map.of(
                        "model",
                        "agilex7",
                        "fpga.example.com/ports",
                        2,
                        "virtual",
                        false,
                        "driverVersion",
                        new DeviceAttributeBuilder().withVersion("1.2.3").build()))
            .capacities(d -> Map.of("memory", "16Gi"))
            .build();

    BackendDevices.Mapping result =
        mapping.map(
            List.of(
                Device.builder("fpga0")
                    .numaNode(1)
                    .deviceNode(DeviceNode.rw("/dev/fpga0"))
                    .build()));

    assertThat(result.problems()).isEmpty();
    io.fabric8.kubernetes.api.model.resource.v1.Device dra = result.draDevices().get(0);
    assertThat(dra.getName()).isEqualTo("fpga0");
    assertThat(dra.getAttributes().get("numaNode").getInt()).isEqualTo(1L);
    assertThat(dra.getAttributes().get("model").getString()).isEqualTo("agilex7");
    assertThat(dra.getAttributes().get("fpga.example.com/ports").getInt()).isEqualTo(2L);
    assertThat(dra.getAttributes().get("virtual").getBool()).isFalse();
    assertThat(dra.getAttributes().get("driverVersion").getVersion()).isEqualTo("1.2.3");
    assertThat(dra.getCapacity().get("memory").getValue()).isEqualTo(new Quantity("16Gi"));
    assertThat(result.backendDevice("fpga0")).map(Device::id).contains("fpga0");
  }

  @Test
  void noNumaAttributeWhenTheNodeIsUnknownOrThereAreSeveral() {
    BackendDevices.Mapping result =
        BackendDevices.defaults()
            .map(List.of(Device.healthy("a"), Device.builder("b").numaNode(0).numaNode(1).build()));

    assertThat(result.draDevices())
        .allSatisfy(d -> assertThat(d.getAttributes()).doesNotContainKey("numaNode"));
  }

  @Test
  void devicesAreSortedByNameAndUnhealthyOnesLeftOutUnlessAsked() {
    List<Device> devices =
        List.of(
            Device.healthy("c"),
            Device.healthy("a"),
            Device.healthy("b").withHealth(Health.UNHEALTHY));

    assertThat(BackendDevices.defaults().map(devices).draDevices())
        .extracting(io.fabric8.kubernetes.api.model.resource.v1.Device::getName)
        .containsExactly("a", "c");
    assertThat(BackendDevices.builder().includeUnhealthy(true).build().map(devices).draDevices())
        .extracting(io.fabric8.kubernetes.api.model.resource.v1.Device::getName)
        .containsExactly("a", "b", "c");
  }

  @Test
  void aDeviceTheApiWouldRefuseIsLeftOutAndNamedWhileTheOthersMap() {
    BackendDevices mapping =
        BackendDevices.builder()
            .attributes(d -> d.id().equals("bad") ? Map.of("no spaces", "x") : Map.of("ok", "y"))
            .build();

    BackendDevices.Mapping result =
        mapping.map(List.of(Device.healthy("good"), Device.healthy("bad")));

    assertThat(result.draDevices())
        .extracting(io.fabric8.kubernetes.api.model.resource.v1.Device::getName)
        .containsExactly("good");
    assertThat(result.problems())
        .singleElement()
        .asString()
        .contains("'bad'", "'no spaces'", "C identifier");
  }

  @Test
  void badValuesCapacitiesAndTooManyAttributesAreNamed() {
    Map<String, Object> many = new HashMap<>();
    for (int i = 0; i < 33; i++) {
      many.put("a" + i, i);
    }
    BackendDevices mapping =
        BackendDevices.builder()
            .attributes(
                d ->
                    switch (d.id()) {
                      case "list" -> Map.of("x", List.of(1));
                      case "long" -> Map.of("x", "y".repeat(65));
                      case "many" -> many;
                      default -> Map.of();
                    })
            .capacities(d -> d.id().equals("cap") ? Map.of("memory", "lots") : Map.of())
            .build();

    BackendDevices.Mapping result =
        mapping.map(
            List.of(
                Device.healthy("list"),
                Device.healthy("long"),
                Device.healthy("many"),
                Device.healthy("cap")));

    assertThat(result.draDevices()).isEmpty();
    assertThat(result.problems())
        .anySatisfy(p -> assertThat(p).contains("'list'", "java.util"))
        .anySatisfy(p -> assertThat(p).contains("'long'", "at most 64"))
        .anySatisfy(p -> assertThat(p).contains("'many'", "at most 32"))
        .anySatisfy(p -> assertThat(p).contains("'cap'", "'lots'", "quantity"));
  }

  @Test
  void repeatedIdsAndNameCollisionsKeepTheFirstAndNameTheOther() {
    String clash = BackendDevices.deviceName("A");
    BackendDevices.Mapping result =
        BackendDevices.defaults()
            .map(
                List.of(
                    Device.healthy("x"),
                    Device.healthy("x"),
                    Device.healthy("A"),
                    Device.healthy(clash)));

    assertThat(result.draDevices())
        .extracting(io.fabric8.kubernetes.api.model.resource.v1.Device::getName)
        .containsExactly(clash, "x");
    assertThat(result.backendDevice(clash)).map(Device::id).contains("A");
    assertThat(result.problems())
        .anySatisfy(p -> assertThat(p).contains("'x'", "twice"))
        .anySatisfy(p -> assertThat(p).contains("'A'", "'" + clash + "'", "both map"));
  }

  @Test
  void aGivenDeviceAttributeIsKeptAsItIs() {
    DeviceAttribute version = new DeviceAttributeBuilder().withVersion("2.0.0").build();
    BackendDevices.Mapping result =
        BackendDevices.builder()
            .attributes(d -> Map.of("fw", version))
            .build()
            .map(List.of(Device.healthy("d")));

    assertThat(result.draDevices().get(0).getAttributes().get("fw")).isEqualTo(version);
  }

  @Test
  void aFailingVendorFunctionLeavesOnlyThatDeviceOut() {
    BackendDevices mapping =
        BackendDevices.builder()
            .attributes(
                d -> {
                  if (d.id().equals("broken")) {
                    throw new IllegalStateException("sysfs read failed");
                  }
                  return Map.of();
                })
            .build();

    BackendDevices.Mapping result =
        mapping.map(List.of(Device.healthy("broken"), Device.healthy("fine")));

    assertThat(result.draDevices())
        .extracting(io.fabric8.kubernetes.api.model.resource.v1.Device::getName)
        .containsExactly("fine");
    assertThat(result.problems())
        .singleElement()
        .asString()
        .contains("'broken'", "sysfs read failed");
  }

  @Test
  void taintValue_isAValidLabelValueOfAtMost63Characters() {
    assertThat(BackendDevices.taintValue("fan failed: 9000 rpm")).isEqualTo("fan-failed-9000-rpm");
    assertThat(BackendDevices.taintValue("  (ecc) ")).isEqualTo("ecc");
    assertThat(BackendDevices.taintValue("")).isEmpty();
    assertThat(BackendDevices.taintValue("!!!")).isEmpty();
    String longReason = "x".repeat(62) + " and more";
    String value = BackendDevices.taintValue(longReason);
    assertThat(value).hasSizeLessThanOrEqualTo(63).isEqualTo("x".repeat(62));
    assertThat(io.github.deviceplugin4j.dra.slices.SliceValidation.labelValue(value)).isTrue();
  }

  @Test
  void anUnhealthyDevice_isTaintedWithItsReason_whenAHealthTaintIsSet() {
    BackendDevices mapping =
        BackendDevices.builder()
            .healthTaint("fpga.example.com/unhealthy", BackendDevices.TaintEffect.NO_EXECUTE)
            .build();
    Device sick = Device.builder("fpga-0").health(Health.UNHEALTHY, "link down").build();

    var dra = mapping.map(List.of(sick, Device.healthy("fpga-1"))).draDevices();

    assertThat(dra).hasSize(2);
    assertThat(dra.get(0).getTaints())
        .singleElement()
        .satisfies(
            t -> {
              assertThat(t.getKey()).isEqualTo("fpga.example.com/unhealthy");
              assertThat(t.getValue()).isEqualTo("link-down");
              assertThat(t.getEffect()).isEqualTo("NoExecute");
            });
    assertThat(dra.get(1).getTaints()).isEmpty();
  }

  @Test
  void aDeviceWhoseBindingConditionsTheApiWouldRefuse_isLeftOutAndNamed_theOthersAreMapped() {
    BackendDevices mapping =
        BackendDevices.builder()
            .bindingConditions(
                d ->
                    d.id().equals("bad")
                        ? new BackendDevices.BindingConditions(List.of("attached"), List.of())
                        : null)
            .build();

    BackendDevices.Mapping mapped =
        mapping.map(List.of(Device.healthy("bad"), Device.healthy("good")));

    assertThat(mapped.draDevices())
        .extracting(io.fabric8.kubernetes.api.model.resource.v1.Device::getName)
        .containsExactly("good");
    assertThat(mapped.problems())
        .singleElement()
        .asString()
        .contains("device 'bad' is left out", "bindingFailureConditions must be set together");
  }
}
