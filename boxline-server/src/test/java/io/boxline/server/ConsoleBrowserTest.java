package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Admin;
import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.DeadLetterQuery;
import io.boxline.OutgoingEvent;
import io.boxline.PartitionLag;
import io.boxline.RetryPolicy;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.WebElement;

/**
 * The web console in a real browser against the server on PostgreSQL, with traffic flowing, a
 * consumer group of two members, a poisoned key, and a topic of two million events for paging. Each
 * step checks what a user sees against {@link Admin} and leaves a screenshot for docs/console.md.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserTest {
  static final String ADMIN = "console-admin-token";
  static final String VIEWER = "console-viewer-token";
  static final TopicName ORDERS = TopicName.parse("shop/orders");
  static final TopicName ARCHIVE = TopicName.parse("shop/archive");
  static final int ARCHIVE_PARTITIONS = 4;
  static final int ARCHIVE_EVENTS = 2_000_000;

  /** The archive's events were created 10 ms apart from this time on, in sequence order. */
  static final Instant ARCHIVE_START = Instant.parse("2026-01-01T00:00:00Z");

  String schema;
  ServerProcess server;
  String base;
  HikariDataSource pool;
  Boxline first;
  Boxline second;
  Admin admin;
  Consumer audit;
  final List<Consumer> billing = new ArrayList<>();
  final Set<String> fixedKeys = ConcurrentHashMap.newKeySet();
  final Set<String> handledPoison = ConcurrentHashMap.newKeySet();
  final AtomicBoolean producing = new AtomicBoolean(true);
  final AtomicBoolean stop = new AtomicBoolean();
  final AtomicLong published = new AtomicLong();
  Thread producer;
  Browser browser;

  @BeforeAll
  void start() throws Exception {
    schema = Databases.uniqueName("bx_console_");
    Databases.postgres().close();
    String yaml =
        "http: {port: 0, shutdownTimeout: 5s}\n"
            + Databases.postgresYaml(schema)
            + "tokens:\n"
            + ServerApiTest.token("ops-admin", ADMIN, "admin", "'*'")
            + ServerApiTest.token("dashboard", VIEWER, "viewer", "'*'")
            + "topics:\n"
            + "  - {name: shop/orders, partitions: 8}\n"
            + "  - {name: shop/archive, partitions: "
            + ARCHIVE_PARTITIONS
            + ", sequencing: in-transaction}\n"
            + "subscriptions:\n"
            + "  - {name: billing, topics: [shop/orders]}\n"
            + "  - {name: audit, topics: [shop/orders]}\n"
            + "  - name: mailer\n"
            + "    topics: [shop/orders]\n"
            + "    handler: {exec: 'while read -r line; do echo ok; done', processes: 2}\n";
    Path config = Files.createTempFile("boxline-console", ".yaml");
    Files.writeString(config, yaml);
    server = ServerProcess.start(Map.of(), "--config", config.toString());
    base = server.awaitReady(Duration.ofSeconds(90));
    HikariConfig hc = new HikariConfig();
    hc.setJdbcUrl(Databases.PG_URL);
    hc.setUsername("postgres");
    hc.setMaximumPoolSize(12);
    pool = new HikariDataSource(hc);
    first = boxline("shop-a");
    second = boxline("shop-b");
    admin = first.admin();
    loadArchive();
    for (Boxline b : List.of(first, second)) {
      billing.add(
          b.consumer("billing")
              .retryPolicy(
                  RetryPolicy.exponential(Duration.ofMillis(10), Duration.ofMillis(20))
                      .inPlaceAttempts(1)
                      .maxAttempts(2))
              .handler(
                  e -> {
                    if (e.key().startsWith("poison")) {
                      if (!fixedKeys.contains(e.key())) {
                        throw new IllegalStateException("payment provider refused the card");
                      }
                      handledPoison.add(e.key());
                    }
                  })
              .start());
    }
    audit = first.consumer("audit").handler(e -> {}).start();
    producer = new Thread(this::produce, "console-test-producer");
    producer.setDaemon(true);
    producer.start();
    publish("poison-1", 1);
    publish("poison-2", 2);
    browser = new Browser(Path.of("target", "console-screenshots"));
  }

  private Boxline boxline(String instance) {
    return Boxline.builder()
        .store(JdbcStore.builder(pool).schema(schema).build())
        .instanceId(instance)
        .build()
        .start();
  }

  /**
   * Two million events written the way in-transaction sequencing writes them (log rows and the
   * partition heads in one transaction), in one statement: publishing them one by one would take
   * the whole test's time.
   */
  private void loadArchive() throws Exception {
    admin.topicState(ARCHIVE); // exists
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      long topicId;
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT t.id FROM "
                  + schema
                  + ".topic t JOIN "
                  + schema
                  + ".namespace n ON n.id = t.namespace_id WHERE n.path = 'shop' AND t.name = 'archive'")) {
        var rs = ps.executeQuery();
        rs.next();
        topicId = rs.getLong(1);
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              "INSERT INTO "
                  + schema
                  + ".log (topic_id, partition, seq, event_id, event_key, event_type, content_type,"
                  + " payload, headers, created_at)"
                  + " SELECT ?, g % ?, g / ? + 1, gen_random_uuid(), 'customer-' || (g % 5000),"
                  + " 'archive.order', 'application/json',"
                  + " convert_to('{\"order\":' || g || ',\"total\":' || (g % 997) || '.50}', 'UTF8'),"
                  + " '{\"origin\":\"import\"}'::jsonb, ?::timestamptz + g * interval '10 milliseconds'"
                  + " FROM generate_series(0, ? - 1) g")) {
        ps.setLong(1, topicId);
        ps.setInt(2, ARCHIVE_PARTITIONS);
        ps.setInt(3, ARCHIVE_PARTITIONS);
        ps.setObject(
            4, java.time.OffsetDateTime.ofInstant(ARCHIVE_START, java.time.ZoneOffset.UTC));
        ps.setInt(5, ARCHIVE_EVENTS);
        ps.executeUpdate();
      }
      try (PreparedStatement ps =
          c.prepareStatement(
              "UPDATE " + schema + ".partition SET last_seq = ? WHERE topic_id = ?")) {
        ps.setLong(1, ARCHIVE_EVENTS / ARCHIVE_PARTITIONS);
        ps.setLong(2, topicId);
        ps.executeUpdate();
      }
      c.commit();
    }
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      st.execute("ANALYZE " + schema + ".log");
    }
    assertThat(admin.topicState(ARCHIVE).events()).isEqualTo(ARCHIVE_EVENTS);
  }

  private void produce() {
    long n = 0;
    while (!stop.get()) {
      // Checked and published under one lock, so pausing waits for a publish in flight.
      synchronized (producing) {
        if (producing.get()) {
          publish("customer-" + ThreadLocalRandom.current().nextInt(40), n++);
        }
      }
      try {
        Thread.sleep(15); // the pace of the background traffic, not a synchronisation
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private void publish(String key, long n) {
    first.inTransaction(
        tx ->
            first
                .publisher()
                .publish(
                    tx,
                    OutgoingEvent.builder(ORDERS)
                        .type("order.placed")
                        .key(key)
                        .contentType("application/json")
                        .header("channel", "web")
                        .payload(
                            ("{\"order\":" + n + ",\"customer\":\"" + key + "\",\"lines\":[1,2]}")
                                .getBytes(StandardCharsets.UTF_8))
                        .build()));
    published.incrementAndGet();
  }

  @AfterAll
  void stop() throws Exception {
    stop.set(true);
    if (producer != null) {
      producer.join(10_000);
    }
    if (browser != null) {
      browser.close();
    }
    for (Boxline b : new Boxline[] {first, second}) {
      if (b != null) {
        b.close();
      }
    }
    if (pool != null) {
      pool.close();
    }
    if (server != null) {
      server.close();
    }
    Databases.dropPostgresSchema(schema);
  }

  private void signIn(String token) {
    // A fresh sign-in: forget the token the tab holds, then load the page again.
    browser.open(base + "/console/");
    browser.script("sessionStorage.clear();");
    browser.open(base + "/console/");
    browser.type("#token", token);
    browser.click("#login button[type=submit]");
    browser.until(
        "the signed-in navigation",
        d -> browser.find("#nav").isDisplayed() && !browser.text("#who").isEmpty());
  }

  private static long number(String shown) {
    return Long.parseLong(shown.replace(",", "").trim());
  }

  private String cell(String row, String field) {
    WebElement e = browser.first(row + " [data-field='" + field + "']");
    return e == null ? null : e.getText();
  }

  @Test
  @Order(1)
  void theOverviewShowsWhatAdminSays() throws Exception {
    browser.open(base + "/console/");
    browser.find("#token");
    browser.screenshot("sign-in");
    signIn(ADMIN);
    assertThat(browser.text("#who")).isEqualTo("ops-admin · admin");
    browser.until(
        "two dead letters in billing",
        d -> admin.failures("billing").deadLetters() == 2 ? true : null);
    pauseProducing();
    // Settled: the consumers caught up with a traffic that stopped, so both sides are still.
    awaitCaughtUp("billing");
    awaitCaughtUp("audit");
    Map<String, String> expected = new HashMap<>();
    for (String s : List.of("billing", "audit")) {
      String row = "tr[data-subscription='" + s + "']";
      expected.put(row + "|lag", String.valueOf(lag(s)));
      expected.put(row + "|dead-letters", String.valueOf(admin.failures(s).deadLetters()));
      expected.put(row + "|retrying", String.valueOf(admin.failures(s).retrying()));
      expected.put(
          row + "|handled",
          String.valueOf(admin.lag(s).stream().mapToLong(PartitionLag::position).sum()));
    }
    for (TopicName t : List.of(ORDERS, ARCHIVE)) {
      expected.put(
          "tr[data-topic='" + t + "']:not([data-subscription])|events",
          String.valueOf(admin.topicState(t).events()));
    }
    browser.until(
        "the overview's numbers equal Admin's " + expected,
        d -> {
          for (var e : expected.entrySet()) {
            String[] rf = e.getKey().split("\\|");
            String shown = cell(rf[0], rf[1]);
            if (shown == null || number(shown) != Long.parseLong(e.getValue())) {
              return null;
            }
          }
          return true;
        });
    assertThat(browser.text("[data-card='dead-letters'] .value")).isEqualTo("2");
    assertThat(browser.text("tr[data-subscription='billing'] [data-field='health']"))
        .isEqualTo("warn");
    producing.set(true);
    browser.until(
        "events per second in, with traffic flowing",
        d -> {
          String r = cell("tr[data-topic='shop/orders']:not([data-subscription])", "in-rate");
          return r != null
              && !r.equals("–")
              && Double.parseDouble(r.replace("/s", "").replace(",", "")) > 0;
        });
    browser.screenshot("overview");
  }

  /** Stops the background traffic; returns once no publish of it can still commit. */
  private void pauseProducing() {
    synchronized (producing) {
      producing.set(false);
    }
  }

  private long lag(String subscription) {
    return admin.lag(subscription).stream().mapToLong(PartitionLag::backlog).sum();
  }

  private void awaitCaughtUp(String subscription) {
    browser.until(
        subscription + " caught up",
        d -> {
          long before = admin.topicState(ORDERS).events();
          return lag(subscription) == 0 && admin.topicState(ORDERS).events() == before;
        });
  }

  @Test
  @Order(2)
  void theHeatMapShowsLagGrowingWhenConsumersStop() throws Exception {
    // Owned tiles need traffic: a partition without backlog is released after the group policy's
    // idleRelease (10 s), so this does not depend on the test before it turning traffic back on.
    producing.set(true);
    browser.open(base + "/console/#/subscription/billing");
    browser.until(
        "billing's two members", d -> browser.all("#members tbody tr").size() == 2 ? true : null);
    assertThat(browser.all("#heatmap .cell")).hasSize(8);
    List<String> shownOwners = new java.util.concurrent.CopyOnWriteArrayList<>();
    try {
      browser.until(
          "every partition owned, by both members",
          d -> {
            List<String> owners = new ArrayList<>();
            for (WebElement c : browser.all("#heatmap .cell")) {
              owners.add(c.getAttribute("data-owner"));
            }
            shownOwners.clear();
            shownOwners.addAll(owners);
            return Set.copyOf(owners).size() == 2 && !owners.contains("") ? true : null;
          });
    } catch (AssertionError e) {
      throw new AssertionError(
          e.getMessage() + "; the tiles' owners last seen: " + shownOwners, e.getCause());
    }
    browser.screenshot("subscription");

    browser.open(base + "/console/#/subscription/audit");
    browser.find("#heatmap .cell");
    audit.close();
    long firstSeen =
        browser.until(
            "a lag on audit's heat map",
            d -> {
              long l = heatLag();
              return l > 0 ? l : null;
            });
    browser.until(
        "audit's lag growing past " + firstSeen, d -> heatLag() > firstSeen + 20 ? true : null);
    browser.until(
        "audit's partitions released",
        d ->
            browser.all("#heatmap .cell").stream()
                    .allMatch(c -> c.getAttribute("data-owner").isEmpty())
                ? true
                : null);
    browser.until(
        "the rebalance log naming the stopped member",
        d -> browser.text("#rebalances").contains("→ nobody") ? true : null);
    browser.until(
        "a lag chart with points", d -> browser.present("#lag-chart polyline") ? true : null);
    browser.screenshot("subscription-lagging");
    // A tile opens the events of its partition this subscription has not handled yet.
    String[] tile =
        browser.until(
            "a tile with a backlog",
            d -> {
              for (WebElement c : browser.all("#heatmap .cell")) {
                if (Long.parseLong(c.getAttribute("data-lag")) > 0) {
                  return new String[] {
                    c.getAttribute("data-partition"), c.getAttribute("data-cursor")
                  };
                }
              }
              return null;
            });
    browser.click("#heatmap .cell[data-partition='" + tile[0] + "']");
    browser.find("#unhandled-banner");
    assertThat(browser.text("#unhandled-banner")).contains("not yet handled by subscription audit");
    browser.until(
        "the first event after audit's position",
        d -> {
          WebElement row = browser.first("#ev-list tbody tr");
          return row != null
                  && Long.parseLong(row.getAttribute("data-sequence"))
                      == Long.parseLong(tile[1]) + 1
              ? true
              : null;
        });
  }

  private long heatLag() {
    long sum = 0;
    for (WebElement c : browser.all("#heatmap .cell")) {
      sum += Long.parseLong(c.getAttribute("data-lag"));
    }
    return sum;
  }

  @Test
  @Order(3)
  void aDeadLetterIsFoundByKeyRedrivenAndDelivered() throws Exception {
    browser.open(base + "/console/#/failures?subscription=billing");
    browser.find("#f-list table");
    browser.type("#f-key", "poison-1");
    browser.click("#f-form button[type=submit]");
    browser.until(
        "only poison-1's dead letter",
        d -> {
          var rows = browser.all("#f-list tbody tr");
          return rows.size() == 1 && "poison-1".equals(rows.get(0).getAttribute("data-key"))
              ? true
              : null;
        });
    browser.click("#f-list tbody tr button");
    browser.until(
        "the inspected error",
        d -> browser.text("#f-detail").contains("payment provider refused the card") ? true : null);
    assertThat(browser.text("#payload")).contains("\"customer\": \"poison-1\"");
    browser.screenshot("dead-letter");

    fixedKeys.add("poison-1");
    browser.click("#f-list tbody tr [data-action='redrive-key']");
    browser.until("the confirmation", d -> browser.find("#confirm").isDisplayed());
    assertThat(browser.text("#confirm-text")).contains("Redrive 1 dead letter of billing");
    browser.screenshot("redrive-confirm");
    browser.click("#confirm-ok");
    browser.until(
        "the redrive's result", d -> browser.text("#status").contains("Redriven: 1") ? true : null);
    browser.until("poison-1 delivered", d -> handledPoison.contains("poison-1") ? true : null);
    assertThat(first.deadLetters().list(DeadLetterQuery.of("billing").key("poison-1"))).isEmpty();
    assertThat(first.deadLetters().list(DeadLetterQuery.of("billing").key("poison-2"))).hasSize(1);

    browser.click("[data-tab='Reasons']");
    browser.until(
        "the remaining dead letter grouped by its reason",
        d -> browser.text("#f-list").contains("payment provider refused the card") ? true : null);
    browser.screenshot("dead-letter-reasons");
  }

  @Test
  @Order(4)
  void millionsOfEventsPageByPositionAndTime() throws Exception {
    int partition = 2;
    long perPartition = ARCHIVE_EVENTS / ARCHIVE_PARTITIONS;
    // Event g of the load is in partition g % 4 at sequence g / 4 + 1, created 10 ms × g in.
    long g = 1_234_562; // partition 2
    Instant created = ARCHIVE_START.plusMillis(10 * g);
    browser.open(
        base + "/console/#/events?topic=shop%2Farchive&partition=" + partition + "&at=" + created);
    browser.until(
        "the page starting at " + created,
        d ->
            browser.text("#ev-range").startsWith(String.format("%,d", g / 4 + 1) + "–")
                ? true
                : null);
    assertThat(browser.text("#ev-range"))
        .endsWith("of " + String.format("%,d", perPartition) + " in partition 2");
    browser.click("#ev-next");
    browser.until(
        "the next page",
        d ->
            browser.text("#ev-range").startsWith(String.format("%,d", g / 4 + 51) + "–")
                ? true
                : null);
    browser.click("#ev-prev");
    browser.until(
        "the page before",
        d ->
            browser.text("#ev-range").startsWith(String.format("%,d", g / 4 + 1) + "–")
                ? true
                : null);
    browser.click("#ev-list tbody tr button");
    browser.until("the payload", d -> browser.text("#payload").contains("\"order\": " + g));
    assertThat(browser.text("#ev-detail")).contains("origin").contains("import");
    browser.screenshot("events");
    browser.click("#ev-detail [data-mode='Hex']");
    browser.until(
        "the payload in hex",
        d -> browser.text("#payload").startsWith("00000000  7b 22") ? true : null);
    // The stored bytes, not the parsed JSON (which would print 276.5 for 276.50).
    assertThat(browser.text("#payload")).contains(".50}");
    browser.click("#ev-detail [data-mode='Stored']");
    browser.until(
        "the payload as stored", d -> browser.text("#payload").startsWith("{") ? true : null);
    assertThat(browser.text("#payload")).contains(".50}").doesNotContain("\n  ");
    // Far into the partition by position.
    browser.type("#ev-at", "");
    browser.type("#ev-after", "499990");
    browser.click("#ev-form button[type=submit]");
    browser.until(
        "the last ten events",
        d ->
            browser.text("#ev-range").equals("499,991–500,000 of 500,000 in partition 2")
                ? true
                : null);
    assertThat(browser.find("#ev-next").isEnabled()).isFalse();
  }

  @Test
  @Order(4)
  void textFromAnEventIsShownAsTextNeverRunAsMarkup() throws Exception {
    String key = "<img src=x onerror=\"window.__xss=1\">";
    io.boxline.PublishResult sent =
        first.inTransaction(
            tx ->
                first
                    .publisher()
                    .publish(
                        tx,
                        OutgoingEvent.builder(ORDERS)
                            .type("<b>order</b>")
                            .key(key)
                            .header("note", "<script>window.__xss=2</script>")
                            .payload("<i>not json</i>".getBytes(StandardCharsets.UTF_8))
                            .build()));
    browser.open(
        base
            + "/console/#/events?topic=shop%2Forders&partition="
            + sent.partition()
            + "&key="
            + java.net.URLEncoder.encode(key, StandardCharsets.UTF_8));
    browser.until(
        "the event with the markup key",
        d -> browser.all("#ev-list tbody tr").size() == 1 ? true : null);
    browser.click("#ev-list tbody tr button");
    browser.until("its detail", d -> browser.text("#ev-detail").contains(key) ? true : null);
    assertThat(browser.text("#ev-list")).contains(key, "<b>order</b>");
    assertThat(browser.text("#ev-detail")).contains("<script>window.__xss=2</script>");
    assertThat(browser.text("#payload")).isEqualTo("<i>not json</i>");
    assertThat(browser.all("#main img, #main script, #main b, #main i")).isEmpty();
    assertThat(browser.script("return window.__xss === undefined")).isEqualTo(true);
  }

  @Test
  @Order(5)
  void anAdminCreatesATopicAndRewindIsRefusedWhileMembersLive() throws Exception {
    browser.open(base + "/console/#/admin");
    browser.type("#new-topic", "shop/refunds");
    browser.type("#new-topic-partitions", "3");
    browser.click("#topic-form button[type=submit]");
    browser.until(
        "the topic created",
        d ->
            browser.text("#status").contains("Topic shop/refunds created with 3 partitions")
                ? true
                : null);
    assertThat(admin.topic(TopicName.parse("shop/refunds")).orElseThrow().partitions())
        .isEqualTo(3);
    browser.screenshot("administration");

    browser.open(base + "/console/#/subscription/billing");
    browser.find("#rewind-form");
    assertThat(browser.find("#rewind-at").getAttribute("value")).isNotBlank();
    new org.openqa.selenium.support.ui.Select(browser.find("#rewind-to")).selectByValue("earliest");
    browser.click("#rewind-form button[type=submit]");
    browser.until("the confirmation", d -> browser.find("#confirm").isDisplayed());
    browser.click("#confirm-ok");
    browser.until(
        "a refusal naming the live consumers",
        d -> browser.text("#status").contains("while it has live consumers") ? true : null);
    assertThat(admin.lag("billing").stream().mapToLong(PartitionLag::position).sum()).isPositive();
  }

  @Test
  @Order(6)
  void aViewerSeesNoWriteControlAndAForgedWriteIsRefused() throws Exception {
    signIn(VIEWER);
    assertThat(browser.text("#who")).isEqualTo("dashboard · viewer");
    assertThat(browser.find("#nav-admin").isDisplayed()).isFalse();
    browser.open(base + "/console/#/subscription/billing");
    browser.find("#heatmap .cell");
    browser.until("the members", d -> browser.present("#members table") ? true : null);
    assertThat(browser.present("#rewind-form")).isFalse();
    assertThat(browser.present("#policy-form")).isFalse();
    browser.open(base + "/console/#/failures?subscription=billing");
    browser.until(
        "poison-2's dead letter",
        d -> browser.all("#f-list tbody tr[data-key='poison-2']").size() == 1 ? true : null);
    assertThat(browser.present("[data-action='redrive-key']")).isFalse();
    assertThat(browser.present("#redrive-all")).isFalse();
    assertThat(browser.present("#discard-all")).isFalse();
    browser.open(base + "/console/#/admin");
    browser.until(
        "the refusal to administer",
        d -> browser.text("#main").contains("This token may not change anything") ? true : null);
    assertThat(browser.present("#topic-form")).isFalse();
    browser.screenshot("viewer");
    // Writes forged from the page itself with the viewer's token.
    assertThat(forged("/v1/subscriptions/billing/dead-letters/redrive", "{}")).isEqualTo(403);
    assertThat(forged("/v1/topics", "{\"name\":\"shop/forged\"}")).isEqualTo(403);
    assertThat(first.deadLetters().list(DeadLetterQuery.of("billing").key("poison-2"))).hasSize(1);
    assertThat(admin.topic(TopicName.parse("shop/forged"))).isEmpty();
  }

  /** The status of a POST sent by the page's script with the token the console holds. */
  private int forged(String path, String body) {
    Object status =
        browser.asyncScript(
            "const done = arguments[arguments.length - 1];"
                + "fetch(arguments[0], {method: 'POST', headers: {Authorization: 'Bearer '"
                + " + sessionStorage.getItem('boxline-console-token'),"
                + " 'Content-Type': 'application/json'}, body: arguments[1]}).then(r => done(r.status));",
            path,
            body);
    return ((Number) status).intValue();
  }

  @Test
  @Order(7)
  void darkThemeAndKeyboard() throws Exception {
    signIn(ADMIN);
    browser.click("#theme");
    browser.until(
        "the other theme",
        d -> browser.script("return document.documentElement.dataset.theme") != null ? true : null);
    browser.open(base + "/console/#/subscription/billing");
    browser.find("#heatmap .cell");
    browser.until("the members", d -> browser.present("#members table") ? true : null);
    browser.screenshot("subscription-dark");
    // Every form field has a label a screen reader reads.
    Object unlabeled =
        browser.script(
            "return [...document.querySelectorAll('input, select')].filter(e => !e.closest('label')"
                + " && !e.getAttribute('aria-label')).length;");
    assertThat(((Number) unlabeled).intValue()).isZero();
  }

  @Test
  @Order(8)
  void theHandlerProgramTheServerRunsIsShownWithItsProcesses() throws Exception {
    signIn(VIEWER);
    browser.open(base + "/console/#/subscription/mailer");
    browser.until(
        "the handler's two processes running",
        d ->
            browser.all("#handler tbody tr").size() == 2
                    && browser.all("#handler tbody tr .badge").stream()
                        .allMatch(b -> b.getText().equals("running"))
                ? true
                : null);
    assertThat(browser.text("#handler code")).isEqualTo("while read -r line; do echo ok; done");
    assertThat(browser.text("#handler")).contains("one process per member");
    browser.screenshot("subscription-handler");
    browser.open(base + "/console/#/subscription/billing");
    browser.find("#heatmap .cell");
    assertThat(browser.present("#handler:not([hidden])")).as("no handler on billing").isFalse();
  }
}
