package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
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
    Path jar = Path.of(System.getProperty("boxline.server.jar", "missing"));
    assertThat(jar)
        .as("run with Maven's verify, which builds the -all jar first and names it")
        .exists();
    assertThat(CLIENT.resolve("package.json")).exists();
    Path dir = Files.createTempDirectory("boxline-typescript");
    // Never skipped: without node and npm the test fails, saying how to install them.
    Run node = run(List.of("node", "--version"), Map.of(), 30, dir);
    // --test-concurrency came with Node 20.10.
    Matcher version = Pattern.compile("v(\\d+)\\.(\\d+)\\.").matcher(node.output);
    assertThat(
            version.find()
                && Integer.parseInt(version.group(1)) * 1000 + Integer.parseInt(version.group(2))
                    >= 20_010)
        .as("%s (node --version: %s)", NODE_MISSING, node.output.trim())
        .isTrue();
    assertThat(run(List.of("npm", "--version"), Map.of(), 30, dir).status)
        .as(NODE_MISSING)
        .isZero();

    String token = "ts-admin-" + UUID.randomUUID();
    String database = Databases.uniqueName("tsclient_");
    try (Connection c = Databases.postgres();
        Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + database);
    }
    Path config = dir.resolve("boxline.yaml");
    Files.writeString(
        config,
        "http: {port: 0, shutdownTimeout: 5s}\n"
            + "database: {url: 'jdbc:postgresql://127.0.0.1:5432/"
            + database
            + "', user: postgres}\n"
            + "tokens:\n"
            + "  - {name: ts-admin, secret: "
            + token
            + ", role: admin, namespaces: ['*']}\n");
    List<String> serverLog = new CopyOnWriteArrayList<>();
    CompletableFuture<String> ready = new CompletableFuture<>();
    Process server =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-jar",
                jar.toAbsolutePath().toString(),
                "--config",
                config.toString())
            .redirectErrorStream(true)
            .start();
    readLines(server, serverLog, ready);
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
      assertThat(npm.status)
          .as("npm installs the package from its folder:\n%s", npm.output)
          .isZero();
      Path installed = consumer.resolve("node_modules").resolve("@boxline").resolve("client");
      assertThat(installed.resolve("dist").resolve("index.js"))
          .as("the install compiled the package:\n%s", npm.output)
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
      assertThat(typeCheck.status)
          .as(
              "tsc type-checks a consumer's file against the installed package:\n%s",
              typeCheck.output)
          .isZero();

      String url;
      try {
        url = ready.get(90, TimeUnit.SECONDS);
      } catch (Exception e) {
        throw new AssertionError(
            "the server did not print 'ready:' within 90 s:\n" + String.join("\n", serverLog), e);
      }
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
                  token,
                  "BOXLINE_REQUIRE_SERVER",
                  "1",
                  "BOXLINE_EXPECT_PACKAGE_DIR",
                  installed.toString()),
              120,
              consumer);
      assertThat(suite.status)
          .as(
              "the TypeScript client's tests pass (exit status 0):\n%s\n--- server log ---\n%s",
              suite.output, String.join("\n", serverLog))
          .isZero();
      assertThat(count(suite.output, "tests"))
          .as("the suite ran tests:\n%s", suite.output)
          .isPositive();
      assertThat(count(suite.output, "fail")).as("no test failed:\n%s", suite.output).isZero();
      assertThat(count(suite.output, "cancelled"))
          .as("no test was cancelled:\n%s", suite.output)
          .isZero();
      assertThat(count(suite.output, "skipped"))
          .as("every test ran, none was skipped:\n%s", suite.output)
          .isZero();
    } finally {
      server.destroy();
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly();
        server.waitFor(10, TimeUnit.SECONDS);
      }
      try (Connection c = Databases.postgres();
          Statement st = c.createStatement()) {
        st.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
      }
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

  private record Run(int status, String output) {}

  /** Runs a command with these environment additions; its exit status and output. */
  private static Run run(List<String> command, Map<String, String> env, int seconds, Path workDir)
      throws Exception {
    ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile());
    pb.environment().putAll(env);
    pb.redirectErrorStream(true);
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      return fail(
          "cannot run " + command.get(0) + ": " + NODE_MISSING + " (" + e.getMessage() + ")");
    }
    CompletableFuture<String> output =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
              } catch (IOException e) {
                return "(output lost: " + e + ")";
              }
            });
    if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
      return fail(
          String.join(" ", command)
              + " did not finish within "
              + seconds
              + " s:\n"
              + output.get(10, TimeUnit.SECONDS));
    }
    return new Run(p.exitValue(), output.get(10, TimeUnit.SECONDS));
  }

  /** Keeps the server's output and completes {@code ready} with its URL. */
  private static void readLines(Process p, List<String> lines, CompletableFuture<String> ready) {
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                  lines.add(line);
                  if (line.startsWith("ready: ")) {
                    ready.complete(line.substring(7).trim());
                  }
                }
              } catch (IOException e) {
                // the server ended
              }
              ready.completeExceptionally(new IllegalStateException("the server exited"));
            },
            "typescript-it-server-output");
    reader.setDaemon(true);
    reader.start();
  }
}
