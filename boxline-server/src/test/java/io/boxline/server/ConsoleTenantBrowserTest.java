package io.boxline.server;

import static io.boxline.server.Api.enc;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Every page of the web console in a real browser, signed in with tokens limited to one tenant's
 * namespace while another tenant has topics, subscriptions, events and dead letters of its own on
 * the same server: each page loads without an error, shows no {@code null}, {@code undefined} or
 * {@code NaN} in place of a value, and nothing of the page (text, attributes, options) names the
 * other tenant.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConsoleTenantBrowserTest {
  static final String ROOT = "tenant-console-root-token";
  static final String ACME_VIEWER = "tenant-console-acme-viewer";
  static final String ACME_ADMIN = "tenant-console-acme-admin";

  /** The other tenant: every name of its namespace, topics and subscriptions contains this. */
  static final String OTHER = "globex";

  /** A value shown as the JavaScript of a missing one. */
  static final Pattern MISSING = Pattern.compile("\\b(null|undefined|NaN)\\b");

  String schema;
  ServerProcess server;
  Api api;
  Browser browser;

  @BeforeAll
  void start() throws Exception {
    schema = Databases.uniqueName("bx_tenants_");
    Databases.postgres().close();
    String yaml =
        "http: {port: 0, shutdownTimeout: 5s}\n"
            + Databases.postgresYaml(schema)
            + "tokens:\n"
            + ServerApiTest.token("root", ROOT, "admin", "'*'")
            + ServerApiTest.token("acme-wall", ACME_VIEWER, "viewer", "acme")
            + ServerApiTest.token("acme-ops", ACME_ADMIN, "admin", "acme")
            + "topics:\n"
            + "  - {name: acme/orders, partitions: 2}\n"
            + "  - {name: globex/ledger, partitions: 2}\n"
            + "subscriptions:\n"
            + "  - {name: acme-billing, topics: [acme/orders]}\n"
            + "  - {name: globex-audit, topics: [globex/ledger]}\n";
    Path config = Files.createTempFile("boxline-tenants", ".yaml");
    Files.writeString(config, yaml);
    server = ServerProcess.start(Map.of(), "--config", config.toString());
    api = new Api(server.awaitReady(Duration.ofSeconds(90)), ROOT);
    // Both tenants get events, and each subscription a handled event and a dead letter.
    for (String[] tenant :
        new String[][] {{"acme/orders", "acme-billing"}, {"globex/ledger", "globex-audit"}}) {
      Api.Reply r =
          api.post(
              "/v1/topics/" + enc(tenant[0]) + "/events",
              "{\"events\":[{\"key\":\"k-1\",\"type\":\"order.placed\",\"payload\":{\"n\":1}},"
                  + "{\"key\":\"k-2\",\"type\":\"order.placed\",\"payload\":{\"n\":2}}]}");
      assertThat(r.status()).as(r.toString()).isEqualTo(200);
      deadLetterOne(tenant[1]);
    }
    browser = new Browser(Path.of("target", "console-screenshots"));
  }

  /** A member of {@code subscription} fetches both events, settles k-1 as dead and k-2 as done. */
  private void deadLetterOne(String subscription) throws InterruptedException {
    String member = "/v1/subscriptions/" + subscription + "/members/m1";
    StringBuilder settle = new StringBuilder();
    int settled = 0;
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (settled < 2) {
      assertThat(System.nanoTime()).as("both events of " + subscription).isLessThan(deadline);
      JsonNode batch = api.post(member + "/fetch", "{\"waitMillis\":1000}").json();
      settle.setLength(0);
      for (JsonNode d : batch.get("events")) {
        boolean dead = d.get("event").get("key").asText().equals("k-1");
        settle
            .append(settle.length() == 0 ? "" : ",")
            .append("{\"ackId\":\"")
            .append(d.get("ackId").asText())
            .append(
                dead
                    ? "\",\"outcome\":\"dead\",\"reason\":\"card declined\"}"
                    : "\",\"outcome\":\"done\"}");
      }
      if (settle.length() > 0) {
        Api.Reply r = api.post(member + "/settle", "{\"settle\":[" + settle + "]}");
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        settled += r.json().get("settled").asInt();
      }
    }
    assertThat(api.delete(member).status()).isEqualTo(200);
    ServerApiTest.await(
        "a dead letter in " + subscription,
        () ->
            api.get("/v1/subscriptions/" + subscription + "/failures")
                    .json()
                    .get("deadLetters")
                    .asLong()
                == 1);
  }

  @AfterAll
  void stop() throws Exception {
    if (browser != null) {
      browser.close();
    }
    if (server != null) {
      server.close();
    }
    Databases.dropPostgresSchema(schema);
  }

  @Test
  void aViewerOfOneNamespaceSeesEveryPageWholeAndNothingOfAnotherTenant() throws Exception {
    signIn(ACME_VIEWER);
    assertThat(browser.text("#who")).isEqualTo("acme-wall · viewer");
    visitEveryPage("viewer");
    browser.open(base() + "/console/#/admin");
    browser.until(
        "the refusal to administer",
        d -> browser.text("#main").contains("This token may not change anything") ? true : null);
    assertWhole("administration (viewer)");
  }

  @Test
  void anAdminOfOneNamespaceSeesEveryPageWholeAndNothingOfAnotherTenant() throws Exception {
    signIn(ACME_ADMIN);
    assertThat(browser.text("#who")).isEqualTo("acme-ops · admin");
    visitEveryPage("admin");
    browser.open(base() + "/console/#/admin");
    browser.until(
        "acme's topic in the retention form",
        d -> browser.present("#ret-topic option[value='acme/orders']") ? true : null);
    browser.until(
        "acme/orders' retention read",
        d -> browser.find("#ret-abandon").getAttribute("value").isEmpty() ? null : true);
    assertWhole("administration (admin)");
    // The subscription page's forms of an admin: positions and the group policy.
    browser.open(base() + "/console/#/subscription/acme-billing");
    browser.until("the group policy form", d -> browser.present("#policy-form") ? true : null);
    browser.find("#rewind-form");
    awaitSecondUpdate("subscription acme-billing (admin)", "[data-card='out-rate'] .value");
    assertWhole("subscription acme-billing (admin)");
  }

  private String base() {
    return api.base;
  }

  /** Overview, subscription, events (with one event open) and failures (each tab, inspected). */
  private void visitEveryPage(String role) throws Exception {
    browser.open(base() + "/console/#/");
    browser.until(
        "acme-billing's row with its dead letter",
        d ->
            "1".equals(text("tr[data-subscription='acme-billing'] [data-field='dead-letters']"))
                ? true
                : null);
    awaitSecondUpdate("the overview", "tr[data-topic='acme/orders'] [data-field='in-rate']");
    assertThat(browser.text("[data-card='topics'] .value")).isEqualTo("1");
    assertThat(browser.text("[data-card='subscriptions'] .value")).isEqualTo("1");
    assertThat(browser.text("[data-card='dead-letters'] .value")).isEqualTo("1");
    browser.screenshot("tenant-overview-" + role);
    assertWhole("overview (" + role + ")");

    browser.open(base() + "/console/#/subscription/acme-billing");
    browser.until(
        "acme-billing's two partitions",
        d -> browser.all("#heatmap .cell").size() == 2 ? true : null);
    browser.until("the members panel", d -> browser.present("#members p, #members table"));
    awaitSecondUpdate("subscription acme-billing", "[data-card='out-rate'] .value");
    assertWhole("subscription acme-billing (" + role + ")");

    browser.open(base() + "/console/#/events?topic=acme%2Forders&partition=0");
    browser.until(
        "acme/orders as the only topic to choose",
        d -> browser.all("#ev-topic option").size() == 1 ? true : null);
    browser.until(
        "a page of events or none",
        d -> browser.present("#ev-list tbody tr, #ev-list p") ? true : null);
    if (!browser.present("#ev-list tbody tr")) {
      browser.type("#ev-partition", "1");
      browser.click("#ev-form button[type=submit]");
      browser.until("partition 1's events", d -> browser.present("#ev-list tbody tr"));
    }
    browser.click("#ev-list tbody tr button");
    browser.until("the payload", d -> browser.text("#payload").contains("\"n\"") ? true : null);
    assertWhole("events (" + role + ")");

    browser.open(base() + "/console/#/failures?subscription=acme-billing");
    browser.until(
        "acme-billing as the only subscription to choose",
        d -> browser.all("#f-subscription option").size() == 1 ? true : null);
    browser.until(
        "acme's dead letter",
        d -> browser.all("#f-list tbody tr[data-key='k-1']").size() == 1 ? true : null);
    browser.click("#f-list tbody tr button");
    browser.until(
        "the inspected dead letter",
        d -> browser.text("#f-detail").contains("card declined") ? true : null);
    assertWhole("failures: dead letters (" + role + ")");
    browser.click("[data-tab='Reasons']");
    browser.until(
        "the dead letters by reason",
        d -> browser.text("#f-list").contains("card declined") ? true : null);
    assertWhole("failures: reasons (" + role + ")");
    browser.click("[data-tab='Retries']");
    browser.until("no retries", d -> browser.text("#f-list").contains("Nothing is being retried"));
    assertWhole("failures: retries (" + role + ")");
  }

  /**
   * Waits until a live page has redrawn after its first sample (a rate needs two): {@code css} then
   * shows a rate instead of a dash, which proves a second refresh went through.
   */
  private void awaitSecondUpdate(String page, String css) {
    browser.until(
        "a second refresh of " + page,
        d -> {
          String shown = text(css);
          return shown != null && shown.endsWith("/s") ? true : null;
        });
  }

  private String text(String css) {
    var e = browser.first(css);
    return e == null ? null : e.getText();
  }

  /** The page as a user sees it: no error, no missing value, nothing of the other tenant. */
  private void assertWhole(String page) throws Exception {
    String status = browser.text("#status");
    String shown = (String) browser.script("return document.body.innerText;");
    String html = (String) browser.script("return document.documentElement.outerHTML;");
    assertThat(status).as("the error line of " + page + "; page:\n" + shown).isEmpty();
    Matcher missing = MISSING.matcher(shown);
    if (missing.find()) {
      browser.screenshot("tenant-missing-value");
      int from = Math.max(0, missing.start() - 80);
      throw new AssertionError(
          page
              + " shows '"
              + missing.group()
              + "' in: …"
              + shown.substring(from, Math.min(shown.length(), missing.end() + 80))
              + "…");
    }
    assertThat(html.toLowerCase(java.util.Locale.ROOT))
        .as(page + " names nothing of the other tenant")
        .doesNotContain(OTHER);
    // The other tenant's things are there: the page omitted them, not the server.
    assertThat(api.get("/v1/topics").body()).contains("globex/ledger");
  }

  private void signIn(String token) {
    browser.open(base() + "/console/");
    browser.script("sessionStorage.clear();");
    browser.open(base() + "/console/");
    browser.type("#token", token);
    browser.click("#login button[type=submit]");
    browser.until(
        "the signed-in navigation",
        d -> browser.find("#nav").isDisplayed() && !browser.text("#who").isEmpty());
  }
}
