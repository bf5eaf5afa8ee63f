#!/bin/sh
# Runs the shell commands of README.md, the docs and the READMEs that can run on a CI runner (a
# JDK, no cluster, no hardware, no container builder), each exactly as its page writes it: a
# command is first looked up, verbatim, in its page, and the run stops when a page no longer has
# it. CI's docs job runs this after nothing but a checkout; DocCommandsTest (in `verify`) checks
# that every command below is still in its page, and that every line of a page's sh block is
# either run here or listed under "not run here" with the reason.
#
# Usage: docs-check/doc-commands.sh   (from anywhere; about 10 minutes on a fresh runner, most of
# it the first ./mvnw install; extra Maven options, such as -Dmaven.repo.local=..., in MAVEN_ARGS)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/dp4j-doc-commands.XXXXXX)
trap 'rm -rf "$work"' EXIT
# The tutorial's readers run `mvn`; this runner runs the same goals through the repository's
# wrapper, which needs no Maven installed.
mvn() { "$root/mvnw" "$@"; }

# doc PAGE COMMAND: runs COMMAND (in the current directory) if PAGE has it verbatim.
doc() {
  page=$1
  shift
  if ! grep -qF -- "$*" "$root/$page"; then
    echo "doc-commands: $page no longer has: $*" >&2
    echo "  (update docs-check/doc-commands.sh with the page)" >&2
    exit 1
  fi
  echo "=== $page: $*"
  eval "$*"
}

cd "$root"

# --- README.md: the quick start's first command (the second, ./mvnw -B verify, is CI's test job)
doc README.md './mvnw -B install -DskipTests && java -jar examples/demo/target/deviceplugin4j-demo.jar'

# --- sdk-testkit/README.md: the command-line jar
doc sdk-testkit/README.md './mvnw -B package -pl sdk-testkit -am -DskipTests'

# --- examples: each plugin against the fake kubelet on the simulated node
page=examples/infiniband/README.md
doc "$page" './mvnw -B -q install -DskipTests -pl examples/infiniband,examples/fixtures,sdk-testkit -am'
doc "$page" 'rm -rf /tmp/dp4j-node && java -jar examples/fixtures/target/deviceplugin4j-example-fixtures.jar /tmp/dp4j-node'
doc "$page" 'sdk-testkit/bin/fake-kubelet conform -- java -jar examples/infiniband/target/deviceplugin4j-example-infiniband.jar --root=/tmp/dp4j-node'
page=examples/fpga/README.md
doc "$page" './mvnw -B -q install -DskipTests -pl examples/fpga,examples/fixtures,sdk-testkit -am'
doc "$page" 'rm -rf /tmp/dp4j-node && java -jar examples/fixtures/target/deviceplugin4j-example-fixtures.jar /tmp/dp4j-node'
doc "$page" 'sdk-testkit/bin/fake-kubelet conform --resource fpga.example.com/af-d8424dc4a4a3c413f89e433683f9040b -- java -jar examples/fpga/target/deviceplugin4j-example-fpga.jar --root=/tmp/dp4j-node --mode=af'
page=examples/nic/README.md
doc "$page" './mvnw -B -q install -DskipTests -pl examples/nic,examples/fixtures,sdk-testkit -am'
doc "$page" 'rm -rf /tmp/dp4j-node && java -jar examples/fixtures/target/deviceplugin4j-example-fixtures.jar /tmp/dp4j-node'
doc "$page" 'printf "pool.sriov_net.pf-names=ens1f0,ens1f1\npool.sriov_net.drivers=iavf\n" > /tmp/dp4j-node/nic.properties'
doc "$page" 'sdk-testkit/bin/fake-kubelet conform -- java -jar examples/nic/target/deviceplugin4j-example-nic.jar --root=/tmp/dp4j-node --config=/tmp/dp4j-node/nic.properties --devinfo-dir=/tmp/dp4j-node/devinfo'

# --- docs/getting-started.md: steps 0, 1, 4 and 5 in a new directory; the files of steps 1-3 are
# those of examples/getting-started, which TutorialProjectTest keeps equal to the page
page=docs/getting-started.md
doc "$page" './mvnw -B -q install -DskipTests'
cd "$work"
doc "$page" 'mkdir -p accel-plugin/src/main/java/com/example/accel accel-plugin/src/test/java/com/example/accel'
doc "$page" 'cd accel-plugin'
cp "$root/examples/getting-started/pom.xml" .
cp -R "$root/examples/getting-started/src/." src/
doc "$page" 'mvn test'
doc "$page" 'mvn -q package -DskipTests'
doc "$page" 'mkdir -p /tmp/accel-node/dev && touch /tmp/accel-node/dev/accel0 /tmp/accel-node/dev/accel1'
doc "$page" 'java -jar target/fake-kubelet.jar conform -- java -jar target/accel-plugin.jar /tmp/accel-node'

# --- not run here, with the reason (DocCommandsTest reads these lines)
# not run here: ./mvnw -B verify: CI's test job runs it
# not run here: java -jar examples/demo/target/deviceplugin4j-demo.jar: the README's first command above runs it
# not run here: java -jar target/fake-kubelet.jar serve --dir /tmp/dp: interactive: the page has you type into it
# not run here: DEVICE_PLUGIN_DIR=/tmp/dp java -jar target/accel-plugin.jar /tmp/accel-node: runs until Ctrl-C, beside the interactive fake
# not run here: fake-kubelet conform [--dir DIR] [--registry DIR] [--resource NAME] [--junit-xml FILE]: a synopsis
# not run here: java -jar deviceplugin4j-dra-conform-VERSION-cli.jar conform --dra --driver fpga.example.com: a template (VERSION, a node's sysfs path); FpgaDraConformanceIT runs the same command in-process
# not run here: fake-kubelet serve --dir DIR [--watcher-dir DIR] [--pod-resources SOCKET] [--grace-period-seconds N]: a synopsis
# not run here: ./mvnw -B -q install -DskipTests -pl examples/fpga -am: the conform section's install builds it and more
# not run here: ./mvnw -B -q install -DskipTests -pl examples/nic -am: the conform section's install builds it and more
# not run here: ./mvnw -B -q install -DskipTests -pl examples/infiniband -am: the conform section's install builds it and more
# not run here: java -jar examples/fpga/target/deviceplugin4j-example-fpga.jar --root=/ --mode=af: needs a node's /sys and a kubelet
# not run here: java -jar examples/nic/target/deviceplugin4j-example-nic.jar --config=nic.properties: needs a node's /sys and a kubelet
# not run here: java -jar examples/infiniband/target/deviceplugin4j-example-infiniband.jar --mode=shared --slots=8: needs a node's /sys and a kubelet
# not run here: docker build --build-context aot=examples/aot -t deviceplugin4j-example-fpga:0.1.0 examples/fpga: needs a container builder
# not run here: docker build --build-context aot=examples/aot -t deviceplugin4j-example-nic:0.1.0 examples/nic: needs a container builder
# not run here: docker build --build-context aot=examples/aot -t deviceplugin4j-example-infiniband:0.1.0 examples/infiniband: needs a container builder
# not run here: kubectl apply -f examples/fpga/k8s/daemonset.yaml: needs a cluster
# not run here: kubectl apply -f examples/fpga/k8s/pod.yaml: needs a cluster
# not run here: kubectl apply -f examples/nic/k8s/configmap.yaml -f examples/nic/k8s/daemonset.yaml: needs a cluster
# not run here: kubectl apply -f examples/nic/k8s/pod.yaml: needs a cluster
# not run here: kubectl apply -f examples/infiniband/k8s/daemonset.yaml -f examples/infiniband/k8s/pod.yaml: needs a cluster
echo "doc-commands: every command ran"
