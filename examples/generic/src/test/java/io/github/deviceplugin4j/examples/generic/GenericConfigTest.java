package io.github.deviceplugin4j.examples.generic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.deviceplugin4j.core.Sharing;
import io.github.deviceplugin4j.examples.generic.GenericConfig.ConfigException;
import io.github.deviceplugin4j.examples.generic.GenericConfig.Group;
import io.github.deviceplugin4j.examples.generic.GenericConfig.Kind;
import io.github.deviceplugin4j.examples.generic.GenericConfig.Resource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GenericConfigTest {

  private static String one(String group) {
    return "resources:\n  - name: dev\n    groups:\n      - " + group + "\n";
  }

  @Test
  void readsEveryKeyOfAResourceAndItsGroups() throws Exception {
    GenericConfig c =
        GenericConfig.parse(
            """
            domain: devices.example.org
            resources:
              - name: serial
                count: 4
                renamed: true
                oneReplicaPerContainer: true
                packed: true
                groups:
                  - paths: ["/dev/ttyUSB*", "/dev/ttyACM*"]
                    permissions: rw
                    mounts: [{hostPath: /run/udev, containerPath: /run/udev}]
                    env: {BAUD: "115200"}
                    cdi: ["vendor.com/serial=all"]
              - name: other.example.com/key
                groups:
                  - usb: [{vendor: "0x1050", product: "0407", serial: "123"}]
                  - pci: [{class: "0x0c03"}]
            """);

    Resource serial = c.resources().get(0);
    assertThat(serial.name()).isEqualTo("devices.example.org/serial");
    assertThat(serial.sharing())
        .isEqualTo(Sharing.replicas(4).renamed().oneReplicaPerContainer().packed());
    Group g = serial.groups().get(0);
    assertThat(g.kind()).isEqualTo(Kind.PATHS);
    assertThat(g.paths()).containsExactly("/dev/ttyUSB*", "/dev/ttyACM*");
    assertThat(g.mounts()).containsExactly(new GenericConfig.Mount("/run/udev", "/run/udev", true));
    assertThat(g.env()).containsEntry("BAUD", "115200");
    assertThat(g.cdi()).containsExactly("vendor.com/serial=all");
    Resource key = c.resources().get(1);
    assertThat(key.name()).isEqualTo("other.example.com/key");
    assertThat(key.sharing()).isEqualTo(Sharing.none());
    assertThat(key.groups().get(0).usb())
        .containsExactly(new GenericConfig.Usb("1050", "0407", Optional.of("123")));
    assertThat(key.groups().get(1).pci())
        .containsExactly(
            new GenericConfig.Pci(Optional.empty(), Optional.empty(), Optional.of("0c03")));
  }

  @Test
  void readsJson() throws Exception {
    GenericConfig c =
        GenericConfig.parse(
            "{\"resources\": [{\"name\": \"snd\", \"count\": 2,"
                + " \"groups\": [{\"paths\": [\"/dev/snd/*\"]}]}]}");
    assertThat(c.resources())
        .singleElement()
        .satisfies(r -> assertThat(r.name()).isEqualTo("generic.example.com/snd"))
        .satisfies(r -> assertThat(r.sharing()).isEqualTo(Sharing.replicas(2)));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '\'',
      value = {
        "{paths: [/dev/x], pathz: 1} | resources[0].groups[0].pathz: unknown key",
        "{env: {A: b}} | resources[0].groups[0]: needs exactly one of 'paths', 'usb' or 'pci'",
        "{paths: [/dev/x], usb: [{vendor: '1', product: '2'}]} | has paths and usb",
        "{paths: [/sys/x]} | resources[0].groups[0].paths[0]: must be a device node glob under /dev/",
        "{usb: [{vendor: 1050, product: '0407'}]} | resources[0].groups[0].usb[0].vendor: quote it",
        "{usb: [{vendor: '105', product: '0407'}]} | resources[0].groups[0].usb[0].vendor: must be 4 hex",
        "{usb: [{vendor: '1050'}]} | resources[0].groups[0].usb[0].product: missing",
        "{pci: [{class: '2'}]} | resources[0].groups[0].pci[0].class: must be 2, 4 or 6 hex digits",
        "{pci: [{}]} | resources[0].groups[0].pci[0]: needs at least one of",
        "{paths: [/dev/x], permissions: x} | resources[0].groups[0].permissions:",
        "{paths: [/dev/x], deviceNodes: [/dev/a*]} | resources[0].groups[0].deviceNodes[0]: must be a plain",
        "{paths: [/dev/x], cdi: [nvidia]} | resources[0].groups[0].cdi[0]: must be a fully qualified CDI",
        "{paths: [/dev/x], mounts: [{hostPath: a, containerPath: /b}]} | mounts[0].hostPath: must be an absolute path",
      })
  void aBadGroupIsRefusedNamingItsKey(String group, String message) {
    assertThatThrownBy(() -> GenericConfig.parse(one(group)))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(message.trim());
  }

  @Test
  void badResourcesAreRefusedNamingTheirKey() {
    assertThatThrownBy(() -> GenericConfig.parse("")).hasMessageContaining("the file is empty");
    assertThatThrownBy(() -> GenericConfig.parse("resource: []"))
        .hasMessageContaining("resource: unknown key; known keys: domain, resources");
    assertThatThrownBy(() -> GenericConfig.parse("resources: []"))
        .hasMessageContaining("resources: must be a non-empty list");
    assertThatThrownBy(
            () -> GenericConfig.parse("resources:\n  - name: Bad Name\n    groups: []\n"))
        .hasMessageStartingWith("resources[0].name: ");
    assertThatThrownBy(
            () ->
                GenericConfig.parse(
                    "resources:\n  - name: a\n    count: 0\n    groups: [{paths: [/dev/a]}]\n"))
        .hasMessageContaining("resources[0].count: must be a whole number from 1 to 1000");
    assertThatThrownBy(
            () ->
                GenericConfig.parse(
                    "resources:\n  - name: a\n    renamed: yes please\n    groups: [{paths: [/dev/a]}]\n"))
        .hasMessageContaining("resources[0].renamed: must be true or false");
    assertThatThrownBy(
            () ->
                GenericConfig.parse(
                    "resources:\n  - {name: a, groups: [{paths: [/dev/a]}]}\n"
                        + "  - {name: a, groups: [{paths: [/dev/b]}]}\n"))
        .hasMessageContaining(
            "resources[1].name: generic.example.com/a is already served by resources[0]");
    assertThatThrownBy(() -> GenericConfig.parse("resources: [\n"))
        .hasMessageContaining("not valid YAML or JSON")
        .hasMessageContaining("line ");
  }

  /** docs/generic.md's reference table: every key with where it goes, as the parser reads it. */
  @Test
  void theDocumentedReferenceHasExactlyTheParsersKeys() throws Exception {
    String page = Files.readString(Path.of("../../docs/generic.md"));
    String table =
        page.substring(page.indexOf("### Reference"), page.indexOf("A device is **unhealthy**"));
    Map<String, Set<String>> documented = new TreeMap<>();
    Matcher m = Pattern.compile("(?m)^\\| `([A-Za-z]+)` \\| ([a-z]+) \\|").matcher(table);
    while (m.find()) {
      documented.computeIfAbsent(m.group(2), k -> new TreeSet<>()).add(m.group(1));
    }
    assertThat(documented)
        .containsOnlyKeys("top", "resource", "group")
        .containsEntry("top", new TreeSet<>(GenericConfig.TOP_KEYS))
        .containsEntry("resource", new TreeSet<>(GenericConfig.RESOURCE_KEYS))
        .containsEntry("group", new TreeSet<>(GenericConfig.GROUP_KEYS));
  }
}
