package io.github.deviceplugin4j.benchmarks.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/** Resident memory per mapped file, from {@code /proc/<pid>/smaps}. */
class SmapsTest {

  @Test
  void parse_sumsEachFilesMappingsAndLeavesAnonymousMemoryOut() {
    Map<String, Long> files =
        Smaps.parse(
            List.of(
                "7f0000000000-7f0000200000 r--p 00000000 fd:01 123   /opt/app.jsa",
                "Size:               2048 kB",
                "Rss:                1024 kB",
                "Pss:                1024 kB",
                "7f0000200000-7f0000400000 rw-p 00200000 fd:01 123   /opt/app.jsa",
                "Rss:                 512 kB",
                "7f0000400000-7f0000500000 rw-p 00000000 00:00 0 ",
                "Rss:                4096 kB",
                "7f0000500000-7f0000600000 r-xp 00000000 fd:01 77    /usr/lib/libjvm.so",
                "Rss:                2048 kB",
                "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0     [stack]",
                "Rss:                  64 kB",
                "VmFlags: rd wr mr mw me ac sd"));

    assertThat(files)
        .containsExactly(
            Map.entry("/usr/lib/libjvm.so", 2048L * 1024), Map.entry("/opt/app.jsa", 1536L * 1024));
  }

  @Test
  @EnabledOnOs(OS.LINUX)
  void residentFiles_ofThisJvm_includeTheJvmLibrary() {
    Map<String, Long> files = Smaps.residentFiles(ProcessHandle.current().pid());

    assertThat(files.keySet()).anyMatch(f -> f.endsWith("/libjvm.so"));
    assertThat(files.values()).allMatch(bytes -> bytes >= 0);
  }
}
