package io.boxline.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * The {@code boxline} command, run through its launcher script in a child process against
 * PostgreSQL. The test JVM plays the application: it runs the sequencer (so that what the command
 * publishes gets sequenced) and, where a test needs one, a Java consumer.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CliTest {
  private static final String PG_URL = "jdbc:postgresql://127.0.0.1:5432/postgres";
  private static final ObjectMapper JSON = new ObjectMapper();

  private String schema;
  private Path home;
  private HikariDataSource pool;
  private Boxline app;
  private Cli cli;

  @BeforeAll
  void start() throws IOException {
    schema = "bxcli_" + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);
    home = Files.createTempDirectory("boxline-cli-home");
    try (Connection c = DriverManager.getConnection(PG_URL, "postgres", "")) {
      c.isValid(1);
    } catch (SQLException e) {
      fail(
          "PostgreSQL must run on 127.0.0.1:5432 with trust auth for these tests; start it with"
              + " 'pg_ctlcluster --skip-systemctl-redirect 15 main start' ("
              + e.getMessage()
              + ")");
    }
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(PG_URL);
    hc.setUsername("postgres");
    hc.setMaximumPoolSize(8);
    pool = new HikariDataSource(hc);
    app =
        Boxline.builder()
            .store(JdbcStore.builder(pool).schema(schema).build())
            .instanceId("cli-test-app")
            .build()
            .start();
    Map<String, String> env = new HashMap<>();
    env.put("BOXLINE_URL", PG_URL);
    env.put("BOXLINE_USER", "postgres");
    env.put("BOXLINE_SCHEMA", schema);
    env.put("BOXLINE_CONFIG_DIR", home.toString());
    cli = new Cli(env);
  }

  @AfterAll
  void stop() throws SQLException {
    if (app != null) {
      app.close();
    }
    if (pool != null) {
      pool.close();
    }
    try (Connection c = DriverManager.getConnection(PG_URL, "postgres", "");
        Statement st = c.createStatement()) {
      st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  private static void await(Duration max, String what, BooleanSupplier done) {
    long end = System.nanoTime() + max.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("timed out after " + max + " waiting for " + what);
      }
      try {
        Thread.sleep(20); // polling a condition with a deadline
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        fail("interrupted");
      }
    }
  }

  private Cli.Result ok(String... args) {
    Cli.Result r = cli.run(args);
    assertThat(r.exit()).as("exit of boxline %s; err: %s", List.of(args), r.err()).isZero();
    return r;
  }

  private JsonNode json(String... args) throws IOException {
    return JSON.readTree(ok(args).out());
  }

  private long sequenced(String topic) {
    return app.admin().topicState(TopicName.parse(topic)).heads().stream()
        .mapToLong(Long::longValue)
        .sum();
  }

  /** Creates namespace, topic and subscription through the command. */
  private void topicAndSubscription(String ns, String topic, int partitions, String sub) {
    ok("create", "namespace", ns);
    assertThat(ok("create", "topic", topic, "--partitions", "" + partitions).out())
        .contains("topic " + topic + ", " + partitions + " partitions, SEQUENCER");
    assertThat(ok("create", "subscription", sub, "--topic", topic, "--start", "earliest").out())
        .contains("subscription " + sub + " on [" + topic + "]");
  }

  /**
   * A payload given as text goes straight to the database as its bytes: JSON is stored as {@code
   * application/json}, byte for byte, other text as UTF-8 text, and {@code tail} shows the bytes.
   */
  @Test
  @Timeout(180)
  void aJsonPayloadIsStoredAsJsonByteForByte() throws Exception {
    String topic = "acme/clict/prices";
    ok("create", "namespace", "acme/clict");
    ok("create", "topic", topic, "--partitions", "1");
    PublishedContentTypes.check(
        cli,
        topic,
        () -> app.admin().events(io.boxline.EventQuery.of(TopicName.parse(topic), 0).limit(100)));
    JsonNode tailed = json("tail", topic, "--from", "earliest", "--key", "a", "-o", "json");
    assertThat(tailed.get("payload").asText()).isEqualTo(PublishedContentTypes.PRICED);
    assertThat(tailed.get("contentType").asText()).isEqualTo("application/json");
  }

  @Test
  @Timeout(180)
  void inspectsAndChangesWhatAdminOffersWithTablesForPeopleAndJsonForScripts() throws Exception {
    String topic = "acme/cli/orders";
    topicAndSubscription("acme/cli", topic, 4, "billing");

    Cli.Result one =
        ok("publish", topic, "--key", "k1", "--type", "Placed", "--payload", "{\"n\":1}");
    assertThat(one.out().strip()).matches("acme/cli/orders/[0-3]  [0-9a-f-]{36}");
    Cli.Result many =
        cli.input(
            "{\"key\":\"k2\",\"type\":\"Placed\",\"payload\":{\"n\":2},\"idempotencyKey\":\"i-2\"}\n"
                + "{\"key\":\"k2\",\"type\":\"Placed\",\"payload\":{\"n\":2},\"idempotencyKey\":\"i-2\"}\n"
                + "{\"key\":\"k3\",\"type\":\"Shipped\",\"payload\":\"plain text\"}\n",
            "publish",
            topic,
            "--stdin");
    assertThat(many.exit()).as(many.err()).isZero();
    assertThat(many.outLines()).hasSize(4);
    assertThat(many.outLines().get(1)).endsWith("duplicate");
    assertThat(many.out()).contains("published 3 event(s), 1 duplicate(s)");
    await(Duration.ofSeconds(30), "3 events sequenced", () -> sequenced(topic) == 3);

    JsonNode orders = null;
    for (JsonNode t : json("topics", "-o", "json")) {
      if (t.get("topic").asText().equals(topic)) {
        orders = t;
      }
    }
    assertThat(orders).as("the topic is listed").isNotNull();
    assertThat(orders.get("partitions").asInt()).isEqualTo(4);
    long events = 0;
    for (JsonNode h : orders.get("lastSequences")) {
      events += h.asLong();
    }
    assertThat(events).isEqualTo(3);
    assertThat(ok("topics").outLines().get(0))
        .startsWith("TOPIC")
        .contains("PARTITIONS", "SEQUENCING", "EVENTS", "RETENTION");

    assertThat(ok("subscriptions").out()).contains("billing", topic, "earliest");
    Cli.Result lag = ok("lag", "billing");
    assertThat(lag.outLines()).hasSize(1 + 4 + 1);
    assertThat(lag.outLines().get(0)).contains("HEAD", "CURSOR", "LAG", "AGE", "OWNER", "EPOCH");
    assertThat(lag.out()).contains("total lag 3 events, 0 member(s)");
    long lagSum = 0;
    for (JsonNode p : json("lag", "billing", "-o", "json").get("partitions")) {
      lagSum += p.get("lag").asLong();
      assertThat(p.get("cursor").asLong()).isZero();
    }
    assertThat(lagSum).isEqualTo(3);
    JsonNode status = json("status", "-o", "json");
    assertThat(status.get("topics").asInt()).isEqualTo(app.admin().topics().size());
    JsonNode billing = null;
    for (JsonNode s : status.get("subscriptions")) {
      if (s.get("name").asText().equals("billing")) {
        billing = s;
      }
    }
    assertThat(billing).as("billing is in the status").isNotNull();
    assertThat(billing.get("backlog").asLong()).isEqualTo(3);
    assertThat(ok("members", "billing").out()).contains("no live members in billing");

    // A Java consumer of the application, stuck in its handler: the command shows it.
    CountDownLatch release = new CountDownLatch(1);
    Consumer consumer =
        app.consumer("billing")
            .id("app-worker")
            .handler(
                e -> {
                  try {
                    release.await();
                  } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                  }
                })
            .start();
    try {
      await(
          Duration.ofSeconds(30),
          "the member reports a handler call in progress",
          () -> {
            try {
              JsonNode m = json("members", "billing", "-o", "json").get("members");
              return m.size() == 1 && m.get(0).get("inFlight").size() > 0;
            } catch (IOException e) {
              throw new IllegalStateException(e);
            }
          });
      Cli.Result members = ok("members", "billing");
      assertThat(members.out())
          .contains("app-worker", ProcessHandle.current().pid() + "@", "call(s), oldest " + topic);
      Cli.Result busy = cli.run("rewind", "billing", "--to", "earliest", "--yes");
      assertThat(busy.exit()).as("rewind while a consumer is live").isEqualTo(4);
      assertThat(busy.err()).startsWith("boxline: error:").contains("app-worker");
    } finally {
      release.countDown();
      consumer.close();
    }
    assertThat(ok("rewind", "billing", "--to", "earliest", "--yes").out())
        .contains("rewound billing to earliest: 3 event(s) to handle");
    assertThat(ok("retries", "billing").outLines()).hasSize(1); // the header only

    assertThat(ok("group-policy", "billing", "--slack", "0.3").out()).contains("slack", "0.3");
    assertThat(app.admin().groupPolicy("billing").slack()).isEqualTo(0.3);
    ok("group-policy", "billing", "--clear");
    assertThat(app.admin().groupPolicy("billing").slack()).isNotEqualTo(0.3);
    assertThat(ok("retention", topic, "--max-age", "P7D").out())
        .contains("max age 7d, keeps unconsumed");
    // Durations are written as in the server's config and API too.
    assertThat(ok("retention", topic, "--max-age", "36h").out()).contains("max age 36h");
    Cli.Result badAge = cli.run("retention", topic, "--max-age", "3 days");
    assertThat(badAge.exit()).isEqualTo(2);
    assertThat(badAge.err())
        .contains("'3 days' is not a duration")
        .contains("250ms, 30s, 5m, 2h, 7d")
        .doesNotContain("Exception");

    Cli.Result unconfirmed = cli.run("delete", "subscription", "billing");
    assertThat(unconfirmed.exit()).isEqualTo(4);
    assertThat(unconfirmed.err()).contains("pass --yes");
    assertThat(app.admin().subscription("billing")).isPresent();
    assertThat(ok("delete", "subscription", "billing", "--yes").out())
        .contains("deleted subscription billing");
    assertThat(ok("delete", "subscription", "billing", "--yes").out())
        .contains("nothing to delete");
    assertThat(ok("delete", "topic", topic, "--yes").out()).contains("deleted topic " + topic);
  }

  @Test
  void badFlagsUrlsAndInputGiveOneLineErrorsWithTheFix() throws IOException {
    Cli.Result flag = cli.run("topics", "--bogus");
    assertThat(flag.exit()).isEqualTo(2);
    assertThat(flag.err()).startsWith("boxline: error: Unknown option: '--bogus'");
    assertThat(flag.err()).contains("Try 'boxline topics --help'");
    assertThat(flag.out()).isEmpty();

    Cli.Result notJdbc = cli.run("topics", "--url", "postgres://db/app");
    assertThat(notJdbc.exit()).isEqualTo(5);
    assertThat(notJdbc.err().strip())
        .isEqualTo(
            "boxline: error: 'postgres://db/app' is not a JDBC URL; it starts with jdbc:, e.g."
                + " jdbc:postgresql://host:5432/db");

    Cli.Result refused = cli.run("topics", "--url", "jdbc:postgresql://127.0.0.1:5999/app");
    assertThat(refused.exit()).isEqualTo(5);
    assertThat(refused.err().lines()).hasSize(1);
    assertThat(refused.err())
        .contains("cannot connect to jdbc:postgresql://127.0.0.1:5999/app")
        .contains("check the URL, the user and BOXLINE_PASSWORD");

    Cli.Result schemaMissing = cli.run("status", "--schema", "no_such_schema");
    assertThat(schemaMissing.exit()).isEqualTo(5);
    assertThat(schemaMissing.err().lines()).hasSize(1);
    assertThat(schemaMissing.err())
        .contains("no Boxline schema 'no_such_schema'")
        .contains("'boxline migrate'");

    Cli.Result missing = cli.run("lag", "nobody");
    assertThat(missing.exit()).isEqualTo(3);
    assertThat(missing.err()).startsWith("boxline: error:").contains("nobody");

    topicAndSubscription("acme/bad", "acme/bad/in", 1, "bad-sub");
    Cli.Result badLine =
        cli.input(
            "{\"key\":\"a\",\"type\":\"t\",\"payload\":1}\n{not json}\n",
            "publish",
            "acme/bad/in",
            "--stdin");
    assertThat(badLine.exit()).isEqualTo(2);
    assertThat(badLine.err()).startsWith("boxline: error: line 2: not JSON");
    assertThat(badLine.err()).contains("nothing of its batch was published");
    assertThat(app.admin().outboxBacklog().events() + sequenced("acme/bad/in"))
        .as("the batch with the bad line was not published")
        .isZero();

    Files.writeString(home.resolve("leaky.properties"), "url=" + PG_URL + "\npassword=x\n");
    Cli.Result leaky = cli.run("topics", "--profile", "leaky");
    assertThat(leaky.exit()).isEqualTo(2);
    assertThat(leaky.err()).contains("holds a password").contains("BOXLINE_PASSWORD");
    assertThat(leaky.err()).doesNotContain("password=x");
  }

  @Test
  @Timeout(180)
  void consumeExecFeedsAProgramInKeyOrderAndItsAnswersRetryAndDeadLetter() throws Exception {
    String topic = "acme/exec/jobs";
    topicAndSubscription("acme/exec", topic, 3, "workers");
    ExecScenario exec = ExecScenario.create();
    Cli.Result pub = cli.input(exec.events(), "publish", topic, "--stdin");
    assertThat(pub.exit()).as(pub.err()).isZero();

    Cli.Running consumer = cli.start(exec.consume("workers"));
    await(
        Duration.ofSeconds(90),
        "30 events handled, the poison and the never-ending one dead-lettered",
        () -> exec.handled().size() == 30 && app.admin().failures("workers").deadLetters() == 2);
    exec.assertEachKeyInOrder();

    Cli.Result dead = ok("dead-letters", "list", "workers");
    assertThat(dead.out()).contains("poison", "dead-lettered by the handler: cannot parse");
    assertThat(dead.out()).contains("never", "still failing");
    // Two dead letters, two reasons, one of each.
    assertThat(ok("dead-letters", "reasons", "workers").outLines())
        .hasSize(3)
        .anySatisfy(l -> assertThat(l).startsWith("1").contains("cannot parse"))
        .anySatisfy(l -> assertThat(l).startsWith("1").contains("still failing"));
    exec.heal();
    assertThat(ok("dead-letters", "redrive", "workers", "--key", "poison", "--yes").out())
        .contains("Redrive: 1 dead letter(s) of workers");
    await(Duration.ofSeconds(60), "the redriven event handled", () -> exec.handled().size() == 31);
    assertThat(exec.handled().get(30)).isEqualTo("poison 1");

    consumer.signal("TERM");
    Cli.Result end = consumer.await(Duration.ofSeconds(60));
    assertThat(end.err()).contains("consuming workers as exec-member");
    assertThat(end.err()).contains("stopped: 31 done");
    assertThat(app.admin().group("workers").members()).as("it left the group").isEmpty();
  }

  private static List<String> lines(Path p) {
    try {
      return Files.exists(p) ? Files.readAllLines(p) : List.of();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  @Timeout(120)
  void tailFollowsNewEventsWithoutASubscriptionOrCursor() throws Exception {
    String topic = "acme/tail/feed";
    ok("create", "namespace", "acme/tail");
    ok("create", "topic", topic, "--partitions", "2");
    ok("publish", topic, "--key", "old", "--type", "t", "--payload", "before");
    await(Duration.ofSeconds(30), "the old event sequenced", () -> sequenced(topic) == 1);
    int subscriptions = app.admin().subscriptions().size();

    Cli.Result earliest = ok("tail", topic, "--from", "earliest");
    assertThat(earliest.out()).contains("key=old", "type=t", "before");

    Cli.Running tail = cli.start("tail", topic, "-f", "--type", "t", "-o", "json");
    tail.awaitErr(Duration.ofSeconds(30), "the tail following", e -> e.contains("following"));
    StringBuilder input = new StringBuilder();
    for (int i = 1; i <= 6; i++) {
      input.append(
          String.format(
              "{\"key\":\"k%d\",\"type\":\"%s\",\"payload\":\"n%d\"}%n",
              i % 2, i == 3 ? "other" : "t", i));
    }
    Cli.Result pub = cli.input(input.toString(), "publish", topic, "--stdin");
    assertThat(pub.exit()).as(pub.err()).isZero();
    tail.awaitOut(
        Duration.ofSeconds(30), "5 new events of type t", out -> out.lines().count() >= 5);
    tail.signal("TERM");
    tail.await(Duration.ofSeconds(30));
    List<JsonNode> seen = new ArrayList<>();
    for (String l : tail.out().split("\n")) {
      seen.add(JSON.readTree(l));
    }
    assertThat(seen).hasSize(5);
    assertThat(seen).noneMatch(n -> n.get("payload").asText().equals("before"));
    assertThat(seen).allMatch(n -> n.get("type").asText().equals("t"));
    for (String key : List.of("k0", "k1")) {
      List<Long> seqs =
          seen.stream()
              .filter(n -> n.get("key").asText().equals(key))
              .map(n -> n.get("sequence").asLong())
              .toList();
      assertThat(seqs).isSorted();
    }
    assertThat(app.admin().subscriptions()).as("tail made no subscription").hasSize(subscriptions);
  }

  @Test
  @Timeout(120)
  void onATerminalItAsksBeforeRedrivingAndLagWatchRepaints() throws Exception {
    String topic = "acme/tty/in";
    topicAndSubscription("acme/tty", topic, 1, "tty-sub");
    ok("publish", topic, "--key", "x", "--type", "t", "--payload", "p");
    Consumer dying =
        app.consumer("tty-sub")
            .retryPolicy(io.boxline.RetryPolicy.DEFAULT.inPlaceAttempts(1).maxAttempts(1))
            .handler(
                e -> {
                  throw new IllegalStateException("no");
                })
            .start();
    await(
        Duration.ofSeconds(30),
        "a dead letter",
        () -> app.admin().failures("tty-sub").deadLetters() == 1);
    dying.close();

    // script(1) runs the command under a pseudo-terminal: System.console() is there.
    Cli.Running asked =
        cli.startCommand(
            List.of(
                "script",
                "-qec",
                "sh " + Cli.LAUNCHER + " dead-letters redrive tty-sub",
                "/dev/null"));
    asked.awaitOut(Duration.ofSeconds(30), "the question", o -> o.contains("[y/N]"));
    assertThat(asked.out()).contains("Redrive 1 dead letter(s) of tty-sub?");
    asked.write("y\n");
    Cli.Result answered = asked.await(Duration.ofSeconds(30));
    assertThat(answered.out()).contains("Redrive: 1 dead letter(s) of tty-sub");
    assertThat(app.admin().failures("tty-sub").deadLetters()).isZero();

    Cli.Running watch =
        cli.startCommand(
            List.of(
                "script", "-qec", "sh " + Cli.LAUNCHER + " lag tty-sub --watch 0.3", "/dev/null"));
    watch.awaitOut(
        Duration.ofSeconds(30), "three repaints", o -> o.split("total lag", -1).length > 3);
    assertThat(watch.out()).contains("\033[H\033[2J", "Ctrl-C to stop", "PARTITION");
    watch.process.descendants().forEach(ProcessHandle::destroy);
    watch.process.destroy();
    watch.await(Duration.ofSeconds(30));
  }

  @Test
  @Timeout(120)
  void migrateCreatesASchemaAndDiscardAndNamespaceDeletesAreConfirmedAndIdempotent()
      throws Exception {
    String fresh = "bxcli_m" + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffff, 36);
    try {
      Cli.Result missing = cli.run("topics", "--schema", fresh);
      assertThat(missing.exit()).isEqualTo(5);
      assertThat(ok("migrate", "--schema", fresh).out()).contains("schema is up to date");
      assertThat(ok("migrate", "--schema", fresh).out())
          .as("again: nothing to do")
          .contains("up to date");
      assertThat(ok("topics", "--schema", fresh).outLines()).hasSize(1); // the header only
    } finally {
      try (Connection c = DriverManager.getConnection(PG_URL, "postgres", "");
          Statement st = c.createStatement()) {
        st.execute("DROP SCHEMA IF EXISTS " + fresh + " CASCADE");
      }
    }

    String topic = "acme/discard/in";
    topicAndSubscription("acme/discard", topic, 2, "discarder");
    for (String key : List.of("x", "y", "z")) {
      ok("publish", topic, "--key", key, "--type", "t", "--payload", key);
    }
    Consumer dying =
        app.consumer("discarder")
            .retryPolicy(io.boxline.RetryPolicy.DEFAULT.inPlaceAttempts(1).maxAttempts(1))
            .handler(
                e -> {
                  throw new IllegalStateException("no " + e.key());
                })
            .start();
    await(
        Duration.ofSeconds(30),
        "three dead letters",
        () -> app.admin().failures("discarder").deadLetters() == 3);
    dying.close();
    Cli.Result unconfirmed = cli.run("dead-letters", "discard", "discarder", "--key", "x");
    assertThat(unconfirmed.exit()).isEqualTo(4);
    assertThat(unconfirmed.err()).contains("1 dead letter(s) of discarder match", "pass --yes");
    assertThat(app.admin().failures("discarder").deadLetters()).isEqualTo(3);
    assertThat(ok("dead-letters", "discard", "discarder", "--key", "x", "--yes").out())
        .contains("Discard: 1 dead letter(s) of discarder");
    JsonNode rest = json("dead-letters", "list", "discarder", "-o", "json");
    assertThat(rest).hasSize(2);
    assertThat(rest.findValuesAsText("key")).containsExactlyInAnyOrder("y", "z");
    assertThat(
            json("dead-letters", "discard", "discarder", "--yes", "-o", "json")
                .get("count")
                .asInt())
        .isEqualTo(2);
    assertThat(ok("dead-letters", "discard", "discarder", "--yes").out())
        .contains("Discard: 0 dead letter(s)");

    Cli.Result notEmpty = cli.run("delete", "namespace", "acme/discard");
    assertThat(notEmpty.exit()).as("a namespace with a topic").isNotZero();
    assertThat(notEmpty.err()).startsWith("boxline: error:");
    ok("delete", "subscription", "discarder", "--yes");
    ok("delete", "topic", topic, "--yes");
    assertThat(ok("delete", "namespace", "acme/discard").out()).contains("deleted namespace");
    assertThat(ok("delete", "namespace", "acme/discard").out()).contains("no namespace");
  }

  @Test
  void everySubcommandHasHelpWithAnExampleAndCompletionIsGenerated() {
    for (List<String> sub :
        List.of(
            List.of("status"),
            List.of("topics"),
            List.of("members"),
            List.of("lag"),
            List.of("retries"),
            List.of("dead-letters", "list"),
            List.of("dead-letters", "redrive"),
            List.of("tail"),
            List.of("publish"),
            List.of("consume"),
            List.of("rewind"),
            List.of("retention"),
            List.of("group-policy"),
            List.of("create", "topic"),
            List.of("create", "subscription"),
            List.of("delete", "subscription"))) {
      // The subcommands' help is rendered in this JVM (a child JVM per subcommand cost 20 s of
      // CI); the launcher's own path to it is the top-level --help below.
      List<String> args = new ArrayList<>(sub);
      args.add("--help");
      StringWriter out = new StringWriter();
      CommandLine cl = BoxlineCli.commandLine();
      cl.setOut(new PrintWriter(out, true));
      int exit = cl.execute(args.toArray(String[]::new));
      assertThat(exit).as("%s --help", sub).isZero();
      assertThat(out.toString())
          .as("%s --help", sub)
          .contains("Usage: boxline " + String.join(" ", sub));
      assertThat(out.toString()).as("%s --help has an example", sub).containsPattern("Examples?:");
    }
    Cli.Result top = ok("--help");
    assertThat(top.out()).contains("Exit codes: 0 done, 1 failed, 2 bad usage");
    Cli.Result completion = ok("completion");
    assertThat(completion.out()).contains("complete -F", "dead-letters", "consume");
  }
}
