package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.server.ExternalClients.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The TypeScript client in {@code clients/typescript}, installed as a user installs it ({@code npm
 * install <folder>} into a consumer directory of its own, whose {@code prepare} compiles it),
 * type-checked from a consumer's file with {@code tsc}, and tested by its own {@code node --test}
 * suite against the {@code -all} jar the build just made, on a fresh PostgreSQL database. The suite
 * runs from the consumer directory, so {@code @boxline/client} resolves through its {@code
 * node_modules}: what is tested is what npm installed.
 */
class TypeScriptClientIT {
  private static final Path CLIENT =
      Path.of("..", "clients", "typescript").toAbsolutePath().normalize();
  private static final String NODE_MISSING =
      "Node.js 20.10 or later with npm is needed for the TypeScript client's test: install"
          + " it with `apt-get install nodejs npm` (Debian) or from https://nodejs.org, and put"
          + " node and npm on the PATH";

  @Test
  void theTypeScriptClientInstallsWithNpmAndPassesItsTestsAgainstTheServer() throws Exception {
    assertThat(CLIENT.resolve("package.json")).exists();
    Path dir = Files.createTempDirectory("boxline-typescript");
    // Never skipped: without node and npm the test fails, saying how to install them.
    Run node = run(List.of("node", "--version"), Map.of(), 30, dir);
    // --test-concurrency came with Node 20.10.
    Matcher version = Pattern.compile("v(\\d+)\\.(\\d+)\\.").matcher(node.output());
    assertThat(
            version.find()
                && Integer.parseInt(version.group(1)) * 1000 + Integer.parseInt(version.group(2))
                    >= 20_010)
        .as("%s (node --version: %s)", NODE_MISSING, node.output().trim())
        .isTrue();
    assertThat(run(List.of("npm", "--version"), Map.of(), 30, dir).status())
        .as(NODE_MISSING)
        .isZero();

    ExternalClients.Server server = ExternalClients.Server.start("ts", dir);
    try {
      // npm runs while the server starts. The consumer is a project of its own, as a user's is:
      // `npm install <folder>` links the folder and runs its `prepare`, which compiles it (and
      // first installs the pinned TypeScript into the folder when it is not there).
      Path consumer = Files.createDirectories(dir.resolve("consumer"));
      Files.writeString(
          consumer.resolve("package.json"),
          "{\"name\": \"boxline-typescript-consumer\", \"private\": true, \"type\": \"module\"}\n");
      Map<String, String> quiet =
          Map.of(
              "npm_config_update_notifier", "false",
              "npm_config_fund", "false",
              "npm_config_audit", "false");
      Run npm =
          run(
              List.of("npm", "install", "--no-audit", "--no-fund", CLIENT.toString()),
              quiet,
              150,
              consumer);
      assertThat(npm.status())
          .as("npm installs the package from its folder:\n%s", npm.output())
          .isZero();
      Path installed = consumer.resolve("node_modules").resolve("@boxline").resolve("client");
      assertThat(installed.resolve("dist").resolve("index.js"))
          .as("the install compiled the package:\n%s", npm.output())
          .exists();
      assertThat(installed.resolve("dist").resolve("index.d.ts")).exists();

      // The suite and a consumer's TypeScript file, in the consumer directory.
      Path tests = Files.createDirectories(consumer.resolve("test"));
      List<String> testFiles = new ArrayList<>();
      try (Stream<Path> files = Files.list(CLIENT.resolve("test"))) {
        for (Path f : files.sorted(Comparator.comparing(Path::toString)).toList()) {
          String name = f.getFileName().toString();
          if (name.endsWith(".mjs") || name.endsWith(".ts")) {
            Files.copy(f, tests.resolve(name));
            if (name.endsWith(".test.mjs")) {
              testFiles.add("test/" + name);
            }
          }
        }
      }
      assertThat(testFiles).as("the client's test files").isNotEmpty();

      // tsc type-checks the consumer's file against the installed declarations: strict, no
      // skipLibCheck, no @types/node (the DOM library has fetch's and AbortSignal's types).
      Files.writeString(
          consumer.resolve("tsconfig.json"),
          "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true, \"target\": \"ES2022\","
              + " \"module\": \"NodeNext\", \"moduleResolution\": \"NodeNext\","
              + " \"lib\": [\"ES2022\", \"DOM\"], \"types\": []},"
              + " \"files\": [\"test/consumer-check.ts\"]}\n");
      Path tsc = CLIENT.resolve("node_modules").resolve("typescript").resolve("bin").resolve("tsc");
      assertThat(tsc).as("the install put the pinned TypeScript in the package's folder").exists();
      Run typeCheck =
          run(List.of("node", tsc.toString(), "-p", consumer.toString()), Map.of(), 90, consumer);
      assertThat(typeCheck.status())
          .as(
              "tsc type-checks a consumer's file against the installed package:\n%s",
              typeCheck.output())
          .isZero();

      String url = server.url();
      List<String> command =
          new ArrayList<>(List.of("node", "--test", "--test-reporter=tap", "--test-concurrency=3"));
      command.addAll(testFiles);
      Run suite =
          run(
              command,
              Map.of(
                  "BOXLINE_URL",
                  url,
                  "BOXLINE_TOKEN",
                  server.token,
                  "BOXLINE_REQUIRE_SERVER",
                  "1",
                  "BOXLINE_EXPECT_PACKAGE_DIR",
                  installed.toString()),
              120,
              consumer);
      assertThat(suite.status())
          .as(
              "the TypeScript client's tests pass (exit status 0):\n%s\n--- server log ---\n%s",
              suite.output(), server.log())
          .isZero();
      assertThat(count(suite.output(), "tests"))
          .as("the suite ran tests:\n%s", suite.output())
          .isPositive();
      assertThat(count(suite.output(), "fail")).as("no test failed:\n%s", suite.output()).isZero();
      assertThat(count(suite.output(), "cancelled"))
          .as("no test was cancelled:\n%s", suite.output())
          .isZero();
      assertThat(count(suite.output(), "skipped"))
          .as("every test ran, none was skipped:\n%s", suite.output())
          .isZero();
    } finally {
      server.close();
      deleteTree(dir);
    }
  }

  /** Deletes the temporary directory; node_modules/@boxline/client is a link, deleted as one. */
  private static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      // a temporary directory left behind
    }
  }

  /** A count from the TAP summary of node's test runner ({@code # tests 12}); -1 when missing. */
  private static int count(String output, String what) {
    Matcher m = Pattern.compile("(?m)^# " + what + " (\\d+)\\s*$").matcher(output);
    int value = -1;
    while (m.find()) {
      value = Integer.parseInt(m.group(1));
    }
    return value;
  }

  private static Run run(List<String> command, Map<String, String> env, int seconds, Path dir)
      throws Exception {
    return ExternalClients.run(command, env, seconds, dir, NODE_MISSING);
  }
}
