#!/bin/sh
# Builds the benchmark's Go programs from Debian packages alone (no module download):
#   kubelet-client  drives a plugin's socket the way the kubelet's device manager does
#   stub-plugin     a minimal device plugin on grpc-go, the peer row
#   fake-kubelet    serves kubelet.sock, dials plugins back, times each re-registration step
# Needs: apt-get install -y golang-go golang-google-grpc-dev golang-google-protobuf-dev \
#          golang-goprotobuf-dev protoc-gen-go-grpc protobuf-compiler
# Usage: benchmarks/go/build.sh [output dir, default benchmarks/target/go]
# The binaries land in <output dir>/bin. Generated code and binaries are build outputs: never commit.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/benchmarks/target/go}
for tool in go protoc protoc-gen-go protoc-gen-go-grpc; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "build.sh: $tool is not on PATH; install Go and the gRPC packages with:" >&2
    echo "  apt-get install -y golang-go golang-google-grpc-dev golang-google-protobuf-dev golang-goprotobuf-dev protoc-gen-go-grpc protobuf-compiler" >&2
    exit 3
  }
done
gopath=$out/gopath
api=$gopath/src/dp4jbench/api/v1beta1
rm -rf "$gopath/src/dp4jbench"
mkdir -p "$api" "$out/bin" "$out/proto"
cp -R "$here/src/dp4jbench/." "$gopath/src/dp4jbench/"
# A copy of the device plugin API with a Go package added; the original stays as the Java build uses it.
sed 's|^package v1beta1;|package v1beta1;\noption go_package = "dp4jbench/api/v1beta1";|' \
  "$repo/sdk-proto/src/main/protobuf/deviceplugin/v1beta1/api.proto" >"$out/proto/api.proto"
protoc -I "$out/proto" --go_out="$api" --go_opt=paths=source_relative \
  --go-grpc_out="$api" --go-grpc_opt=paths=source_relative "$out/proto/api.proto"
export GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" GOFLAGS=
# Go's own build cache (~/.cache/go-build) unless GOCACHE says otherwise: compiling grpc-go from
# the Debian sources costs about 30 s of CPU the first time, and a fresh clone reuses it.
if [ -z "${GOCACHE:-}" ]; then
  GOCACHE=$(go env GOCACHE 2>/dev/null || true)
  case $GOCACHE in /*) ;; *) GOCACHE=$out/cache ;; esac
fi
export GOCACHE
for prog in kubeletclient:kubelet-client stubplugin:stub-plugin fakekubelet:fake-kubelet; do
  go build -o "$out/bin/${prog#*:}" "dp4jbench/${prog%%:*}"
done
echo "built $out/bin/kubelet-client $out/bin/stub-plugin $out/bin/fake-kubelet"
