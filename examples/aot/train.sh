#!/bin/sh
# Trains a plugin's start-up cache: runs the plugin jar through a short, realistic workload (start,
# registration, the kubelet's calls and admissions, 30 kubelet restarts and re-registrations, the
# plugin watcher) and writes what the JVM learned, for the plugin's later starts.
#
#   train.sh <java> <plugin.jar> <output>
#
# The JVM flags are those of JDK_JAVA_OPTIONS, which the java launcher reads itself: the example
# Dockerfiles set it with ENV, the benchmark harness sets it from the FPGA example's Dockerfile, so
# the training, the image and the benchmark run the same flags. A cache only serves a JVM started
# with the same java, the same jar path and compatible flags; otherwise that JVM starts without it.
#
# On JDK 25 or newer, <output> is an AOT cache (JEP 483 and 514: classes loaded and linked; with
# JEP 515's method profiles unless the flags leave them out, as the example images' flags do),
# written in one step at the training's clean exit (-XX:AOTCacheOutput); run the plugin
# with -XX:AOTCache=<output>. On an older JDK, <output> is an application class-data-sharing archive
# of the classes the training loaded; run the plugin with -XX:SharedArchiveFile=<output>. The script
# then checks that the JVM accepts what it wrote with these flags and this jar, and fails otherwise.
#
# The workload is the jar's own CdsTraining main (examples/common, in every example plugin's jar),
# which needs no kubelet and no hardware; it exits with status 0 when every step passed.
#
# It prints one last line, "trained <aot|cds> <output>", and exits 0; any other exit fails a build.
set -eu

if [ "$#" -ne 3 ]; then
  echo "usage: train.sh <java> <plugin.jar> <output>" >&2
  exit 2
fi
java=$1
jar=$2
out=$3
if [ ! -f "$jar" ]; then
  echo "train.sh: no plugin jar at $jar" >&2
  exit 2
fi

main=io.github.deviceplugin4j.examples.common.CdsTraining
work=$(mktemp -d /tmp/dp4jtrain.XXXXXX)
trap 'rm -rf "$work"' EXIT
rm -f "$out"

# Runs the workload with the given extra JVM flags for the plugin's JVM.
train() {
  "$java" "$@" -cp "$jar" "$main"
}

if "$java" -XX:+PrintFlagsFinal -version 2>/dev/null | grep -q ' AOTCacheOutput '; then
  kind=aot
  # JDK 25 refuses the AOT options next to an -Xshare option: the flags must not carry one. JEP
  # 514's one step: the JVM writes the cache as the training exits.
  train -XX:AOTCacheOutput="$out"
  if [ ! -s "$out" ]; then
    echo "train.sh: the training ended but wrote no AOT cache at $out" >&2
    exit 1
  fi
  # AOTMode=on makes a cache the JVM cannot use (other flags, another jar) an error, not a silent
  # start without it; the listing shows the SDK's classes are in it.
  "$java" -XX:AOTCache="$out" -XX:AOTMode=on -XX:+PrintSharedArchiveAndExit -cp "$jar" \
    >"$work/check.txt" 2>&1 || {
    tail -20 "$work/check.txt" >&2
    echo "train.sh: the JVM does not accept the AOT cache $out" >&2
    exit 1
  }
else
  kind=cds
  train -XX:DumpLoadedClassList="$work/classes.lst"
  # -Xshare:dump comes after the flags' own -Xshare option, if any: the last one counts.
  "$java" -Xshare:dump -XX:SharedClassListFile="$work/classes.lst" -XX:SharedArchiveFile="$out" \
    -cp "$jar" >"$work/dump.txt" 2>&1 || {
    tail -20 "$work/dump.txt" >&2
    echo "train.sh: writing the CDS archive $out failed" >&2
    exit 1
  }
  "$java" -XX:SharedArchiveFile="$out" -Xshare:on -XX:+PrintSharedArchiveAndExit \
    -XX:+PrintSharedDictionary -cp "$jar" \
    >"$work/check.txt" 2>&1 || {
    tail -20 "$work/check.txt" >&2
    echo "train.sh: the JVM does not accept the CDS archive $out" >&2
    exit 1
  }
fi
if ! grep -Eq 'io[./]github[./]deviceplugin4j[./]core[./]' "$work/check.txt"; then
  echo "train.sh: $out holds none of the SDK's classes: the training did not run the plugin" >&2
  exit 1
fi
echo "trained $kind $out"
