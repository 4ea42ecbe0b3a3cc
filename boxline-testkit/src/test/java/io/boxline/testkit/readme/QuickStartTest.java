package io.boxline.testkit.readme;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The README's front-door example compiles, runs, and is the one the README shows. */
class QuickStartTest {

  @Test
  void theReadmeShowsThisExample() throws Exception {
    Path root = Path.of("").toAbsolutePath();
    Path readme = Files.exists(root.resolve("README.md")) ? root : root.getParent();
    String text = Files.readString(readme.resolve("README.md"), StandardCharsets.UTF_8);
    String example =
        Files.readString(
                readme.resolve(
                    "boxline-testkit/src/test/java/io/boxline/testkit/readme/QuickStart.java"),
                StandardCharsets.UTF_8)
            .replaceFirst("(?s)^package [^\n]*\n\n", "")
            .replaceFirst("(?m)^/\\*\\* The README's quick start.*\n", "");
    assertThat(text).as("README's quick start").contains(example);
  }

  @Test
  @Timeout(60)
  void itRunsAndTheHandlerCharges() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL(
        "jdbc:h2:mem:readme_"
            + UUID.randomUUID().toString().replace("-", "")
            + ";DB_CLOSE_DELAY=-1");
    h2.setUser("sa");
    PrintStream out = System.out;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
    try {
      QuickStart.run(h2);
    } finally {
      System.setOut(out);
    }
    assertThat(printed.toString(StandardCharsets.UTF_8)).contains("charge c-7");
  }
}
