package io.github.deviceplugin4j.docs.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps {@code docs-check/doc-commands.sh}, which CI's docs job runs, in step with the pages whose
 * shell commands it runs: every command it runs is still in its page, and every command of those
 * pages' {@code sh} blocks is either run by it or listed there as not run, with the reason.
 */
class DocCommandsTest {
  static final Path ROOT = DocsTree.root();

  /** The pages the script covers completely. */
  static final List<String> PAGES =
      List.of(
          "README.md",
          "docs/getting-started.md",
          "sdk-testkit/README.md",
          "examples/fpga/README.md",
          "examples/nic/README.md",
          "examples/infiniband/README.md");

  /** {@code doc PAGE 'COMMAND'}, the page a literal or {@code "$page"} set just before. */
  static final Pattern DOC = Pattern.compile("^doc (\\S+) '(.*)'$");

  static final Pattern PAGE = Pattern.compile("^page=(\\S+)$");

  static final Pattern NOT_RUN = Pattern.compile("^# not run here: (.+?): (.+)$");

  record Command(String page, String text) {}

  static List<String> script() throws IOException {
    return Files.readAllLines(ROOT.resolve("docs-check/doc-commands.sh"));
  }

  static List<Command> commandsRun() throws IOException {
    List<Command> out = new ArrayList<>();
    String page = null;
    for (String line : script()) {
      Matcher p = PAGE.matcher(line);
      if (p.matches()) {
        page = p.group(1);
      }
      Matcher d = DOC.matcher(line);
      if (d.matches()) {
        String target = d.group(1).equals("\"$page\"") ? page : d.group(1);
        out.add(new Command(target, d.group(2)));
      }
    }
    return out;
  }

  /** The commands of a page's sh blocks: one per line, continuations and comments left out. */
  static List<String> shCommands(Path page) throws IOException {
    List<String> out = new ArrayList<>();
    boolean inBlock = false;
    boolean continued = false;
    for (String line : Files.readAllLines(page)) {
      if (!inBlock) {
        inBlock = line.equals("```sh");
        continue;
      }
      if (line.startsWith("```")) {
        inBlock = false;
        continue;
      }
      boolean continuation = continued;
      continued = line.endsWith("\\");
      String command = line.replaceFirst("\\s+#.*$", "").replaceFirst("\\s*\\\\$", "").trim();
      if (!continuation && !command.isEmpty() && !command.startsWith("#")) {
        out.add(command);
      }
    }
    return out;
  }

  @Test
  void everyCommandTheScriptRunsIsStillInItsPage() throws IOException {
    List<Command> run = commandsRun();
    assertThat(run).hasSizeGreaterThan(15);
    for (Command c : run) {
      assertThat(c.page()).as("the page of %s", c.text()).isNotNull();
      assertThat(Files.readString(ROOT.resolve(c.page())))
          .as("%s still has the command doc-commands.sh runs", c.page())
          .contains(c.text());
    }
  }

  @Test
  void everyShellCommandOfThePagesIsRunOrSaysWhyNot() throws IOException {
    List<String> run = commandsRun().stream().map(Command::text).toList();
    List<String> notRun = new ArrayList<>();
    for (String line : script()) {
      Matcher m = NOT_RUN.matcher(line);
      if (m.matches()) {
        notRun.add(m.group(1));
      }
    }
    List<String> uncovered = new ArrayList<>();
    for (String page : PAGES) {
      for (String command : shCommands(ROOT.resolve(page))) {
        boolean covered =
            run.stream().anyMatch(r -> r.contains(command))
                || notRun.stream().anyMatch(n -> n.equals(command) || command.startsWith(n));
        if (!covered) {
          uncovered.add(page + ": " + command);
        }
      }
    }
    assertThat(uncovered)
        .as(
            "shell commands that docs-check/doc-commands.sh neither runs (doc PAGE 'COMMAND') nor"
                + " lists as '# not run here: COMMAND: why'")
        .isEmpty();
  }

  @Test
  void shCommandsSkipCommentsAndContinuations(@TempDir Path dir) throws IOException {
    Path page = dir.resolve("page.md");
    Files.writeString(
        page,
        "text\n```sh\n# a comment\nfirst --flag \\\n  --more\nsecond   # why\n\n```\n"
            + "```yaml\nnot: shell\n```\n");
    assertThat(shCommands(page)).containsExactly("first --flag", "second");
  }
}
