package io.github.deviceplugin4j.examples.testing;

import io.github.deviceplugin4j.examples.common.EnvironmentDefaults;
import io.github.deviceplugin4j.examples.common.PluginCli;
import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * One run of an example's command line in this JVM, with what it printed: how the examples' tests
 * check {@code --help}, {@code --version} and errors.
 *
 * <pre>{@code
 * CliRun run = CliRun.of(new FpgaPlugin(), FpgaPlugin.defaults(Map.of()), "--bogus");
 * assertThat(run.exitCode()).isEqualTo(2);
 * }</pre>
 *
 * @param exitCode what {@code main} would exit with
 * @param out what went to standard output
 * @param err what went to standard error
 */
public record CliRun(int exitCode, String out, String err) {

  /**
   * Runs a command.
   *
   * @param command the {@code @Command} object
   * @param defaults where options not given come from
   * @param args the command line
   * @return the run
   */
  public static CliRun of(Object command, EnvironmentDefaults defaults, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        PluginCli.execute(
            command, defaults, new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new CliRun(code, out.toString(), err.toString());
  }

  /**
   * Everything printed, standard output then standard error.
   *
   * @return the text
   */
  public String all() {
    return out + err;
  }
}
