package io.boxline.spring.boot.lifecycletest;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.EventType;
import io.boxline.TopicName;
import io.boxline.spring.BoxlineListener;
import io.boxline.spring.BoxlineOutbox;
import io.boxline.spring.boot.BoxlineProperties;
import io.boxline.testkit.Await;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The actuator over real HTTP (a web server on a random port) on PostgreSQL: the {@code boxline}
 * endpoint redrives and discards dead letters when writes are enabled (and refuses them when not),
 * and the {@code boxline} health goes DOWN while the database refuses connections and UP again once
 * it takes them.
 */
class StarterActuatorHttpTest {
  static final TopicName ORDERS = TopicName.parse("acme/web/orders");

  public record Order(String id) {}

  private final String schema = BootApps.newName("bxhttp");
  private final List<String> databases = new CopyOnWriteArrayList<>();
  private ConfigurableApplicationContext context;

  @AfterEach
  void cleanUp() throws Exception {
    if (context != null) {
      context.close();
    }
    BootApps.admin("drop schema if exists " + schema + " cascade");
    for (String db : databases) {
      BootApps.admin("drop database if exists " + db + " with (force)");
    }
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {
    @Bean
    EventType<Order> order() {
      return EventType.of(Order.class, "order.placed", ORDERS).key(Order::id);
    }

    @Bean
    Billing billing() {
      return new Billing();
    }
  }

  /** Fails the orders it is told to, on each of their three attempts: they become dead letters. */
  public static class Billing {
    final Set<String> failing = ConcurrentHashMap.newKeySet();
    final List<String> handled = new CopyOnWriteArrayList<>();

    @BoxlineListener(subscription = "billing", maxAttempts = 3)
    public void on(Order order) {
      if (failing.contains(order.id())) {
        throw new IllegalStateException("declined " + order.id() + " (expected by the test)");
      }
      handled.add(order.id());
    }
  }

  private ConfigurableApplicationContext start(String database, Map<String, Object> more) {
    Map<String, Object> p = new HashMap<>();
    p.put("server.port", "0");
    // The error's message in the response body (Boot 3's name, then Boot 4's).
    p.put("server.error.include-message", "always");
    p.put("spring.web.error.include-message", "always");
    p.put("spring.datasource.url", BootApps.SERVER + database);
    p.put("spring.datasource.username", "postgres");
    p.put("boxline.schema", schema);
    p.put("boxline.namespaces[0]", "acme/web");
    p.put("boxline.topics[acme/web/orders].partitions", "2");
    p.put("boxline.subscriptions.billing.topics[0]", "acme/web/orders");
    p.put("management.endpoints.web.exposure.include", "health,boxline");
    p.put("management.endpoint.health.show-details", "always");
    p.putAll(more);
    context = BootApps.run(App.class, WebApplicationType.SERVLET, p);
    return context;
  }

  /** The subscription's parked events as key:state, from the database. */
  private List<String> parked() {
    String s = context.getBean(BoxlineProperties.class).getSchema();
    return new JdbcTemplate(context.getBean(DataSource.class))
        .queryForList(
            "select k.event_key || ':' || k.state from "
                + s
                + ".parked k join "
                + s
                + ".subscription b on b.id = k.subscription_id"
                + " where b.name = 'billing' order by k.event_key",
            String.class);
  }

  @Test
  void theEndpointRedrivesAndDiscardsDeadLettersOverHttpWhenWritesAreEnabled() throws Exception {
    start("postgres", Map.of("boxline.endpoint.write-enabled", "true"));
    int port = BootApps.port(context);
    Billing billing = context.getBean(Billing.class);
    BoxlineOutbox outbox = context.getBean(BoxlineOutbox.class);
    billing.failing.addAll(List.of("o1", "o2"));
    outbox.inTransaction(
        () -> outbox.publishAll(List.of(new Order("o1"), new Order("o2"), new Order("o3"))));
    Await.until(
        Duration.ofSeconds(30),
        "o1 and o2 dead, o3 handled",
        () -> parked() + " handled " + billing.handled,
        seen -> seen.equals("[o1:DEAD, o2:DEAD] handled [o3]"));
    BootApps.Response view = BootApps.get(port, "/actuator/boxline/billing");
    assertThat(view.status()).isEqualTo(200);
    assertThat(view.body()).contains("\"deadLetters\":2", "declined o1");

    // Redrive o1, which succeeds this time.
    billing.failing.remove("o1");
    BootApps.Response redrive =
        BootApps.post(port, "/actuator/boxline/billing", "{\"action\":\"redrive\",\"key\":\"o1\"}");
    assertThat(redrive.status()).as(redrive.body()).isEqualTo(200);
    assertThat(redrive.body()).contains("\"action\":\"redrive\"", "\"events\":1");
    assertThat(parked()).doesNotContain("o1:DEAD").contains("o2:DEAD");
    Await.until(
        Duration.ofSeconds(30),
        "o1 handled after the redrive",
        () -> parked() + " handled " + billing.handled,
        seen -> seen.equals("[o2:DEAD] handled [o3, o1]"));

    // Discard o2: gone from the database for good, never handled.
    BootApps.Response discard =
        BootApps.post(port, "/actuator/boxline/billing", "{\"action\":\"discard\",\"key\":\"o2\"}");
    assertThat(discard.status()).as(discard.body()).isEqualTo(200);
    assertThat(discard.body()).contains("\"action\":\"discard\"", "\"events\":1");
    assertThat(parked()).isEmpty();
    assertThat(BootApps.get(port, "/actuator/boxline/billing").body())
        .contains("\"deadLetters\":0");
    assertThat(billing.handled).containsExactly("o3", "o1");

    // Nothing left to take; an unknown action is a bad request.
    assertThat(BootApps.post(port, "/actuator/boxline/billing", "{\"action\":\"redrive\"}").body())
        .contains("\"events\":0");
    BootApps.Response unknown =
        BootApps.post(port, "/actuator/boxline/billing", "{\"action\":\"explode\"}");
    assertThat(unknown.status()).isEqualTo(400);
    assertThat(unknown.body()).contains("action 'explode' is unknown; use redrive or discard");
  }

  @Test
  void healthIsDownWhileTheDatabaseRefusesConnectionsAndUpOnceItTakesThemAgain() throws Exception {
    String db = BootApps.newName("bxhealth");
    BootApps.admin("create database " + db);
    databases.add(db);
    start(
        db,
        Map.of(
            // A pool that gives up on a connection within a second.
            "spring.datasource.hikari.connection-timeout", "1000",
            "spring.datasource.hikari.validation-timeout", "500",
            "spring.datasource.hikari.maximum-pool-size", "4"));
    int port = BootApps.port(context);
    BootApps.Response up = BootApps.get(port, "/actuator/health/boxline");
    assertThat(up.status()).as(up.body()).isEqualTo(200);
    // One indicator's response has one "status" (first on Boot 3, after "details" on Boot 4).
    assertThat(up.body()).contains("\"status\":\"UP\"");

    // Writes are off by default.
    BootApps.Response refused =
        BootApps.post(port, "/actuator/boxline/billing", "{\"action\":\"discard\"}");
    assertThat(refused.status()).isEqualTo(400);
    assertThat(refused.body()).contains("boxline.endpoint.write-enabled=true");

    // The database takes no new connections and its open ones are cut.
    BootApps.admin(
        "alter database " + db + " allow_connections false",
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = '" + db + "'");
    Await.until(
        Duration.ofSeconds(60),
        "health DOWN",
        () -> call(port, "/actuator/health/boxline"),
        r -> r.status() == 503 && r.body().contains("\"status\":\"DOWN\""));
    assertThat(call(port, "/actuator/health/boxline").body()).contains("\"error\"");
    assertThat(call(port, "/actuator/health").status()).isEqualTo(503);

    BootApps.admin("alter database " + db + " allow_connections true");
    Await.until(
        Duration.ofSeconds(60),
        "health UP again",
        () -> call(port, "/actuator/health/boxline"),
        r -> r.status() == 200 && r.body().contains("\"status\":\"UP\""));
  }

  private static BootApps.Response call(int port, String path) {
    try {
      return BootApps.get(port, path);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
