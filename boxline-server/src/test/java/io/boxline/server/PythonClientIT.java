package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.server.ExternalClients.Run;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Python client in {@code clients/python}, installed as a user installs it (pip, offline, into
 * a directory of its own) and tested by its own unittest suite against the {@code -all} jar the
 * build just made, on a fresh PostgreSQL database. The suite runs from the source tree with only
 * the installed package on {@code PYTHONPATH}, so what is tested is what pip installed.
 */
class PythonClientIT {
  private static final Path CLIENT =
      Path.of("..", "clients", "python").toAbsolutePath().normalize();

  @Test
  void thePythonClientInstallsWithPipAndPassesItsTestsAgainstTheServer() throws Exception {
    assertThat(CLIENT.resolve("pyproject.toml")).exists();
    Path dir = Files.createTempDirectory("boxline-python");
    ExternalClients.Server server = ExternalClients.Server.start("py", dir);
    try {
      // pip runs while the server starts.
      Path site = dir.resolve("site");
      Run pip =
          run(
              List.of(
                  "python3",
                  "-m",
                  "pip",
                  "install",
                  "--no-build-isolation",
                  "--no-index",
                  "--disable-pip-version-check",
                  "--target",
                  site.toString(),
                  CLIENT.toString()),
              Map.of(),
              90,
              dir);
      assertThat(pip.status()).as("pip installs the package offline:\n%s", pip.output()).isZero();
      assertThat(site.resolve("boxline").resolve("client.py")).exists();

      String url = server.url();
      Run tests =
          run(
              List.of(
                  "python3",
                  "-m",
                  "unittest",
                  "discover",
                  "-s",
                  CLIENT.resolve("tests").toString(),
                  "-v"),
              Map.of(
                  "PYTHONPATH",
                  site.toString(),
                  "PYTHONDONTWRITEBYTECODE",
                  "1",
                  "BOXLINE_URL",
                  url,
                  "BOXLINE_TOKEN",
                  server.token,
                  "BOXLINE_REQUIRE_SERVER",
                  "1",
                  "BOXLINE_EXPECT_PACKAGE_DIR",
                  site.resolve("boxline").toString()),
              100,
              dir);
      assertThat(tests.status())
          .as(
              "the Python client's tests pass (exit status 0):\n%s\n--- server log ---\n%s",
              tests.output(), server.log())
          .isZero();
      assertThat(tests.output())
          .as("every test ran, none was skipped:\n%s", tests.output())
          .contains("\nOK")
          .doesNotContain("skipped");
    } finally {
      server.close();
    }
  }

  /**
   * Runs a command; not from clients/python: `python3 -m` puts the working directory first on
   * sys.path, where the source tree's package would shadow the installed one.
   */
  private static Run run(List<String> command, Map<String, String> env, int seconds, Path dir)
      throws Exception {
    return ExternalClients.run(command, env, seconds, dir, "is python3 on the PATH?");
  }
}
