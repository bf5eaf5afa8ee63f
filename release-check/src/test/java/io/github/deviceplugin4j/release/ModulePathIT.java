package io.github.deviceplugin4j.release;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plugin in a named module ({@code requires io.github.deviceplugin4j.core}) compiles against the
 * built jars and runs on the module path: the jars' Automatic-Module-Names are usable.
 */
class ModulePathIT {

  static final Path SOURCES =
      Path.of(System.getProperty("release.root", ".."))
          .resolve("release-check/src/test/resources/modulepath/com.example.modular");

  @TempDir Path work;

  @Test
  void aPluginThatRequiresTheSdkModuleCompilesAndRegistersOnTheModulePath()
      throws IOException, InterruptedException {
    List<String> sdkJars = new ArrayList<>();
    List<String> otherJars = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path path = Path.of(entry);
      if (path.getFileName().toString().startsWith("deviceplugin4j-")) {
        assertThat(path)
            .as("the SDK on the test class path must be built jars (run the verify phase)")
            .isRegularFile();
        sdkJars.add(entry);
      } else if (entry.endsWith(".jar") && !isTestOnly(path)) {
        otherJars.add(entry);
      }
    }
    // The SDK's jars are automatic modules on the module path; their dependencies (gRPC, Netty,
    // protobuf, slf4j) stay on the class path, which automatic modules read.
    String modulePath = String.join(File.pathSeparator, sdkJars);
    String classPath = String.join(File.pathSeparator, otherJars);

    Path classes = work.resolve("classes");
    List<String> javacArgs = new ArrayList<>();
    javacArgs.addAll(
        List.of("--module-path", modulePath, "--class-path", classPath, "-d", classes.toString()));
    try (Stream<Path> files = Files.walk(SOURCES)) {
      files.filter(f -> f.toString().endsWith(".java")).forEach(f -> javacArgs.add(f.toString()));
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    ByteArrayOutputStream compilerOutput = new ByteArrayOutputStream();
    int compiled =
        javac.run(null, compilerOutput, compilerOutput, javacArgs.toArray(String[]::new));
    assertThat(compiled).as("javac: %s", compilerOutput).isZero();

    Path pluginDir = Files.createDirectories(work.resolve("p"));
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process process =
        new ProcessBuilder(
                java.toString(),
                "--module-path",
                classes + File.pathSeparator + modulePath,
                "--class-path",
                classPath,
                "-m",
                "com.example.modular/com.example.modular.Main",
                pluginDir.toString())
            .redirectErrorStream(true)
            .start();
    boolean exited = process.waitFor(2, TimeUnit.MINUTES);
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!exited) {
      process.destroyForcibly();
    }

    assertThat(exited).as("the plugin exits; output:%n%s", output).isTrue();
    assertThat(process.exitValue()).as("exit status; output:%n%s", output).isZero();
    assertThat(output)
        .contains(
            "registered: plugin module com.example.modular, SDK module"
                + " io.github.deviceplugin4j.core, jdk.unsupported present")
        .doesNotContain("sun.misc.Signal is not available");
  }

  private static boolean isTestOnly(Path jar) {
    String name = jar.getFileName().toString();
    return name.startsWith("junit-")
        || name.startsWith("opentest4j")
        || name.startsWith("apiguardian")
        || name.startsWith("assertj-")
        || name.startsWith("byte-buddy")
        || name.startsWith("surefire")
        || name.startsWith("common-java5")
        || name.startsWith("kubernetes-");
  }
}
