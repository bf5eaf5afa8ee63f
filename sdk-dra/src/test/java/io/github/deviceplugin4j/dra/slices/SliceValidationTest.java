package io.github.deviceplugin4j.dra.slices;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatus;
import io.fabric8.kubernetes.api.model.resource.v1.AllocatedDeviceStatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.CapacityRequestPolicyBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Counter;
import io.fabric8.kubernetes.api.model.resource.v1.CounterSet;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCapacity;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumption;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceTaint;
import io.fabric8.kubernetes.api.model.resource.v1.NetworkDeviceData;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpecBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Each limit of upstream's validation.go: exactly the limit passes, one more is refused. */
class SliceValidationTest {

  private static Device device(String name) {
    return new DeviceBuilder().withName(name).build();
  }

  private static Map<String, Counter> counters(int n) {
    Map<String, Counter> m = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      m.put("c" + i, new Counter(new Quantity("1")));
    }
    return m;
  }

  private static DeviceCounterConsumption consume(String set, Map<String, Counter> counters) {
    return new io.fabric8.kubernetes.api.model.resource.v1.DeviceCounterConsumptionBuilder()
        .withCounterSet(set)
        .withCounters(counters)
        .build();
  }

  private static List<DeviceTaint> taints(int n) {
    return IntStream.range(0, n)
        .mapToObj(i -> new DeviceTaint("NoSchedule", "example.com/t" + i, null, "v"))
        .toList();
  }

  @Test
  void deviceName_dnsLabelOf63_passes_64_isRefused() {
    assertThat(SliceValidation.device(device("a".repeat(63)))).isEmpty();
    assertThat(SliceValidation.device(device("a".repeat(64))))
        .singleElement()
        .asString()
        .contains("DNS label");
    assertThat(SliceValidation.device(device("Upper"))).isNotEmpty();
  }

  @Test
  void attributesAndCapacities_32Pass_33AreRefused() {
    Map<String, io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute> attrs =
        new LinkedHashMap<>();
    for (int i = 0; i < 31; i++) {
      attrs.put("a" + i, new DeviceAttributeBuilder().withInt((long) i).build());
    }
    Device ok =
        new DeviceBuilder()
            .withName("d")
            .withAttributes(attrs)
            .withCapacity(Map.of("mem", new DeviceCapacity(null, new Quantity("1Gi"))))
            .build();
    assertThat(SliceValidation.device(ok)).isEmpty();
    attrs.put("a31", new DeviceAttributeBuilder().withInt(31L).build());
    Device tooMany = new DeviceBuilder(ok).withAttributes(attrs).build();
    assertThat(SliceValidation.device(tooMany))
        .singleElement()
        .asString()
        .contains("device 'd'", "33 attributes and capacities", "at most 32");
  }

  @Test
  void attributeNamesAndValues_followTheirLimits() {
    Device ok =
        new DeviceBuilder()
            .withName("d")
            .withAttributes(
                Map.of(
                    "x".repeat(32),
                    new DeviceAttributeBuilder().withString("s".repeat(64)).build(),
                    "d".repeat(63) + "/v",
                    new DeviceAttributeBuilder().withVersion("1.2.3-rc.1+b5").build()))
            .build();
    assertThat(SliceValidation.device(ok)).isEmpty();
    Device bad =
        new DeviceBuilder()
            .withName("d")
            .withAttributes(
                Map.of(
                    "x".repeat(33),
                    new DeviceAttributeBuilder().withBool(true).build(),
                    "s",
                    new DeviceAttributeBuilder().withString("s".repeat(65)).build(),
                    "v",
                    new DeviceAttributeBuilder().withVersion("1.2").build(),
                    "d".repeat(64) + "/w",
                    new DeviceAttributeBuilder().withBool(true).build(),
                    "none",
                    new DeviceAttributeBuilder().build()))
            .build();
    assertThat(SliceValidation.device(bad))
        .hasSize(5)
        .anySatisfy(p -> assertThat(p).contains("'" + "x".repeat(33) + "'", "at most 32"))
        .anySatisfy(p -> assertThat(p).contains("attribute 's'", "65 characters", "at most 64"))
        .anySatisfy(p -> assertThat(p).contains("attribute 'v'", "semantic version"))
        .anySatisfy(p -> assertThat(p).contains("domain of at most 63"))
        .anySatisfy(p -> assertThat(p).contains("'none'", "exactly one"));
  }

  @Test
  void taints_16Pass_17AreRefused_andEachTaintIsChecked() {
    assertThat(
            SliceValidation.device(new DeviceBuilder(device("d")).withTaints(taints(16)).build()))
        .isEmpty();
    assertThat(
            SliceValidation.device(new DeviceBuilder(device("d")).withTaints(taints(17)).build()))
        .singleElement()
        .asString()
        .contains("17 taints", "at most 16");
    DeviceTaint badValue = new DeviceTaint("NoSchedule", "example.com/x", null, "v".repeat(64));
    DeviceTaint badKey = new DeviceTaint("NoSchedule", "-bad", null, "");
    DeviceTaint badEffect = new DeviceTaint("PreferNoSchedule", "example.com/y", null, "");
    assertThat(
            SliceValidation.device(
                new DeviceBuilder(device("d")).withTaints(badValue, badKey, badEffect).build()))
        .hasSize(3)
        .anySatisfy(p -> assertThat(p).contains("not a label value"))
        .anySatisfy(p -> assertThat(p).contains("taint key '-bad'"))
        .anySatisfy(p -> assertThat(p).contains("PreferNoSchedule"));
    DeviceTaint longestValue = new DeviceTaint("NoExecute", "example.com/x", null, "v".repeat(63));
    assertThat(
            SliceValidation.device(new DeviceBuilder(device("d")).withTaints(longestValue).build()))
        .isEmpty();
  }

  @Test
  void counterConsumptions_2Pass_3AreRefused_32CountersPass_33AreRefused() {
    Device two =
        new DeviceBuilder(device("d"))
            .withConsumesCounters(consume("a", counters(32)), consume("b", counters(1)))
            .build();
    assertThat(SliceValidation.device(two)).isEmpty();
    Device three = new DeviceBuilder(two).addToConsumesCounters(consume("c", counters(1))).build();
    assertThat(SliceValidation.device(three))
        .singleElement()
        .asString()
        .contains("3 counter sets", "at most 2");
    Device tooManyCounters =
        new DeviceBuilder(device("d")).withConsumesCounters(consume("a", counters(33))).build();
    assertThat(SliceValidation.device(tooManyCounters))
        .singleElement()
        .asString()
        .contains("33 counters", "at most 32");
  }

  @Test
  void counterSets_32CountersPass_33AreRefused_8SetsPerSlicePass_9AreRefused() {
    assertThat(SliceValidation.counterSet(new CounterSet(counters(32), "card-0"))).isEmpty();
    assertThat(SliceValidation.counterSet(new CounterSet(counters(33), "card-0")))
        .singleElement()
        .asString()
        .contains("counter set 'card-0'", "33 counters", "at most 32");
    assertThat(SliceValidation.counterSet(new CounterSet(counters(1), "Card_0")))
        .singleElement()
        .asString()
        .contains("DNS label");
    List<CounterSet> eight = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      eight.add(new CounterSet(counters(1), "s" + i));
    }
    assertThat(
            SliceValidation.slice(new ResourceSliceSpecBuilder().withSharedCounters(eight).build()))
        .isEmpty();
    List<CounterSet> nine = new ArrayList<>(eight);
    nine.add(new CounterSet(counters(1), "s8"));
    assertThat(
            SliceValidation.slice(new ResourceSliceSpecBuilder().withSharedCounters(nine).build()))
        .singleElement()
        .asString()
        .contains("9 counter sets", "at most 8");
  }

  @Test
  void devicesPerSlice_128Pass_129AreRefused_64WhenADeviceIsTainted() {
    List<Device> devices = new ArrayList<>();
    for (int i = 0; i < 128; i++) {
      devices.add(device("d" + i));
    }
    assertThat(SliceValidation.slice(new ResourceSliceSpecBuilder().withDevices(devices).build()))
        .isEmpty();
    devices.add(device("d128"));
    assertThat(SliceValidation.slice(new ResourceSliceSpecBuilder().withDevices(devices).build()))
        .singleElement()
        .asString()
        .contains("129 devices", "at most 128");

    List<Device> tainted = new ArrayList<>(devices.subList(0, 63));
    tainted.add(new DeviceBuilder(device("t")).withTaints(taints(1)).build());
    assertThat(SliceValidation.slice(new ResourceSliceSpecBuilder().withDevices(tainted).build()))
        .isEmpty();
    tainted.add(device("one-more"));
    assertThat(SliceValidation.slice(new ResourceSliceSpecBuilder().withDevices(tainted).build()))
        .singleElement()
        .asString()
        .contains("65 devices", "at most 64", "taints");
  }

  @Test
  void aSliceHoldsDevicesOrCounters_notBoth() {
    assertThat(
            SliceValidation.slice(
                new ResourceSliceSpecBuilder()
                    .withDevices(device("d"))
                    .withSharedCounters(new CounterSet(counters(1), "s"))
                    .build()))
        .singleElement()
        .asString()
        .contains("either devices or sharedCounters");
  }

  @Test
  void bindingConditions_4Pass_5AreRefused_andNeedFailureConditions() {
    Device four =
        new DeviceBuilder(device("d"))
            .withBindsToNode(true)
            .withBindingConditions("a", "b", "c", "d")
            .withBindingFailureConditions("e", "f", "g", "h")
            .build();
    assertThat(SliceValidation.device(four)).isEmpty();
    assertThat(
            SliceValidation.device(
                new DeviceBuilder(four)
                    .addToBindingConditions("i")
                    .addToBindingFailureConditions("j")
                    .build()))
        .hasSize(2)
        .anySatisfy(p -> assertThat(p).contains("5 bindingConditions", "at most 4"))
        .anySatisfy(p -> assertThat(p).contains("5 bindingFailureConditions", "at most 4"));
    assertThat(
            SliceValidation.device(
                new DeviceBuilder(device("d")).withBindingConditions("attached").build()))
        .singleElement()
        .asString()
        .contains("set together");
  }

  @Test
  void requestPolicy_needsMultipleAllocations_and10ValidValuesPass_11AreRefused() {
    List<Quantity> ten =
        IntStream.rangeClosed(1, 10).mapToObj(i -> new Quantity(i + "Gi")).toList();
    DeviceCapacity withTen =
        new DeviceCapacity(
            new CapacityRequestPolicyBuilder()
                .withDefault(new Quantity("1Gi"))
                .withValidValues(ten)
                .build(),
            new Quantity("16Gi"));
    Device shared =
        new DeviceBuilder(device("d"))
            .withAllowMultipleAllocations(true)
            .withCapacity(Map.of("memory", withTen))
            .build();
    assertThat(SliceValidation.device(shared)).isEmpty();
    assertThat(
            SliceValidation.device(
                new DeviceBuilder(shared).withAllowMultipleAllocations(null).build()))
        .singleElement()
        .asString()
        .contains("capacity 'memory'", "allowMultipleAllocations");
    List<Quantity> eleven = new ArrayList<>(ten);
    eleven.add(new Quantity("11Gi"));
    DeviceCapacity withEleven =
        new DeviceCapacity(
            new CapacityRequestPolicyBuilder(withTen.getRequestPolicy())
                .withValidValues(eleven)
                .build(),
            new Quantity("16Gi"));
    assertThat(
            SliceValidation.device(
                new DeviceBuilder(shared).withCapacity(Map.of("memory", withEleven)).build()))
        .singleElement()
        .asString()
        .contains("11 validValues", "at most 10");
  }

  @Test
  void deviceStatus_8ConditionsAnd16IpsPass_oneMoreIsRefused() {
    List<io.fabric8.kubernetes.api.model.Condition> eight =
        IntStream.range(0, 8)
            .mapToObj(
                i ->
                    new io.fabric8.kubernetes.api.model.ConditionBuilder()
                        .withType("T" + i)
                        .withStatus("True")
                        .build())
            .toList();
    List<String> ips = IntStream.range(0, 16).mapToObj(i -> "10.0.0." + i + "/24").toList();
    AllocatedDeviceStatus ok =
        new AllocatedDeviceStatusBuilder()
            .withDriver("nic.example.com")
            .withPool("node-1")
            .withDevice("vf-0")
            .withConditions(eight)
            .withNetworkData(new NetworkDeviceData("aa:bb:cc:dd:ee:ff", "eth1", ips))
            .build();
    assertThat(SliceValidation.deviceStatus(ok)).isEmpty();
    List<io.fabric8.kubernetes.api.model.Condition> nine = new ArrayList<>(eight);
    nine.add(
        new io.fabric8.kubernetes.api.model.ConditionBuilder()
            .withType("T8")
            .withStatus("True")
            .build());
    List<String> seventeen = new ArrayList<>(ips);
    seventeen.add("10.0.1.1/24");
    AllocatedDeviceStatus bad =
        new AllocatedDeviceStatusBuilder(ok)
            .withConditions(nine)
            .withNetworkData(new NetworkDeviceData("aa:bb:cc:dd:ee:ff", "eth1", seventeen))
            .build();
    assertThat(SliceValidation.deviceStatus(bad))
        .hasSize(2)
        .anySatisfy(p -> assertThat(p).contains("9 conditions", "at most 8"))
        .anySatisfy(p -> assertThat(p).contains("17 IPs", "at most 16"));
  }
}
