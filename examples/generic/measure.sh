#!/bin/bash
# Idle RSS and re-registration time of the generic plugin serving k8s/configmap.yaml's three
# resources on a generated node, against the fake kubelet (`fake-kubelet serve`). The figures in
# docs/generic.md come from this script. Needs the plugin's jar and the testkit's cli jar:
#   ./mvnw -B -q install -DskipTests -pl sdk-testkit,examples/generic -am
#   examples/generic/measure.sh [path to the local Maven repository, default ~/.m2/repository]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="${1:-$HOME/.m2/repository}"
fk="$repo/io/github/deviceplugin4j/deviceplugin4j-testkit/0.1.0-SNAPSHOT/deviceplugin4j-testkit-0.1.0-SNAPSHOT-cli.jar"
jar="$here/target/deviceplugin4j-example-generic.jar"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A node: two serial adapters, a USB key (1050:0407 on bus 1, device 4), an Intel Ethernet card.
t="$work/node"
mkdir -p "$t/dev/bus/usb/001" "$t/dev/vfio" "$t/sys/bus/usb/devices/1-2" "$t/sys/bus/pci/devices/0000:17:00.0" "$work/dp"
touch "$t/dev/ttyUSB0" "$t/dev/ttyUSB1" "$t/dev/bus/usb/001/004" "$t/dev/vfio/vfio"
printf '1050\n' > "$t/sys/bus/usb/devices/1-2/idVendor"
printf '0407\n' > "$t/sys/bus/usb/devices/1-2/idProduct"
printf '1\n' > "$t/sys/bus/usb/devices/1-2/busnum"
printf '4\n' > "$t/sys/bus/usb/devices/1-2/devnum"
p="$t/sys/bus/pci/devices/0000:17:00.0"
printf '0x8086\n' > "$p/vendor"; printf '0x1521\n' > "$p/device"; printf '0x020000\n' > "$p/class"; printf '0\n' > "$p/numa_node"
# The ConfigMap's file, unindented.
sed -n '/config.yaml: |/,$p' "$here/k8s/configmap.yaml" | tail -n +2 | sed 's/^    //' > "$work/config.yaml"

mkfifo "$work/cmd"
java -jar "$fk" serve --dir "$work/dp" < "$work/cmd" > "$work/events.jsonl" 2> "$work/fk.err" &
fkpid=$!
exec 3> "$work/cmd"
sleep 2
# The image's flags (without its class-data archive, which only applies inside the image).
JDK_JAVA_OPTIONS="$(sed -n '/^ENV JDK_JAVA_OPTIONS="/,/"$/p' "$here/Dockerfile" | sed 's/^ENV JDK_JAVA_OPTIONS="//; s/"$//; s/\\$//' | tr '\n' ' ')"
export JDK_JAVA_OPTIONS
echo "flags: $JDK_JAVA_OPTIONS"
DEVICE_PLUGIN_DIR="$work/dp" PLUGINS_REGISTRY_DIR=/nonexistent \
  java -jar "$jar" --root="$t" --config="$work/config.yaml" > "$work/plugin.log" 2>&1 &
pid=$!
for r in serial yubikey nic; do echo "await-registration generic.example.com/$r 30" >&3; done
sleep 30
echo "idle after 30 s:     $(grep VmRSS /proc/$pid/status)"
for i in 1 2 3; do echo restart >&3; sleep 3; done
sleep 2
echo "after 3 restarts:    $(grep VmRSS /proc/$pid/status)"
kill -TERM "$pid"; wait "$pid" || true
echo quit >&3; exec 3>&-; wait "$fkpid" || true
# From each kubelet restart event to each resource's Register.
python3 - "$work/events.jsonl" <<'PY'
import datetime, json, sys
def t(e):
    base, frac = e["time"].rstrip("Z").split(".")
    return datetime.datetime.fromisoformat(base).timestamp() + float("0." + frac)
last = None
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("type") != "event":
        continue
    if e["kind"] == "RESTART":
        last = t(e)
    elif e["kind"] == "REGISTER" and last is not None:
        print(f"re-registered {e['resource']} {1000 * (t(e) - last):.1f} ms after the restart")
PY
