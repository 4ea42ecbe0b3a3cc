package io.boxline.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.ConnectionStateException;
import io.boxline.PartitionLag;
import io.boxline.testkit.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The starter in a Boot application on PostgreSQL: JPA writes and events in one
 * {@code @Transactional} method, declared topics and subscriptions, listener and task beans,
 * Micrometer, health and the actuator endpoint.
 */
@SpringBootTest(classes = ShopApp.class)
class StarterPostgresTest {
  static final String SCHEMA =
      "bxboot_" + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);

  @DynamicPropertySource
  static void properties(DynamicPropertyRegistry r) {
    r.add(
        "spring.datasource.url",
        () -> "jdbc:postgresql://127.0.0.1:5432/postgres?currentSchema=" + SCHEMA);
    r.add("spring.datasource.username", () -> "postgres");
    r.add("spring.jpa.hibernate.ddl-auto", () -> "create");
    r.add("spring.jpa.properties.hibernate.default_schema", () -> SCHEMA);
    r.add("spring.jpa.properties.hibernate.hbm2ddl.create_namespaces", () -> "true");
    // Boxline's tables in a schema of their own: Hibernate's ddl-auto=create drops its schema.
    r.add("boxline.schema", () -> SCHEMA + "_bx");
    r.add("boxline.namespaces[0]", () -> "acme/shop");
    r.add("boxline.topics[acme/shop/orders].partitions", () -> "4");
    r.add("boxline.subscriptions.shipping.topics[0]", () -> "acme/shop/orders");
    r.add("boxline.subscriptions.audit.topics[0]", () -> "acme/shop/orders");
    r.add("boxline.topics[acme/shop/shipments].partitions", () -> "2");
    r.add("boxline.subscriptions.notify.topics[0]", () -> "acme/shop/shipments");
    r.add("management.endpoints.web.exposure.include", () -> "health,boxline");
  }

  @Autowired ShopApp.OrderService service;
  @Autowired ShopApp.Listeners listeners;
  @Autowired ShopApp.JooqOrders jooq;
  @Autowired Boxline boxline;
  @Autowired JdbcTemplate jdbc;
  @Autowired BoxlineEndpoint endpoint;
  @Autowired io.micrometer.core.instrument.MeterRegistry meters;

  @Autowired org.springframework.context.ApplicationContext context;

  /** The health indicator's status, through reflection: its type moved between Boot 3 and 4. */
  private String healthStatus() throws ReflectiveOperationException {
    Object indicator = context.getBean("boxlineHealthIndicator");
    Object health = indicator.getClass().getMethod("health").invoke(indicator);
    return health.getClass().getMethod("getStatus").invoke(health).toString();
  }

  @AfterAll
  static void dropSchema() throws Exception {
    try (var c =
            java.sql.DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
        var s = c.createStatement()) {
      s.execute("drop schema if exists " + SCHEMA + " cascade");
      s.execute("drop schema if exists " + SCHEMA + "_bx cascade");
    }
  }

  private int count(String table) {
    return jdbc.queryForObject("select count(*) from " + SCHEMA + "." + table, Integer.class);
  }

  @Test
  void jpaWritesAndEventsCommitTogetherAndReachListenersAndTasks() throws Exception {
    io.opentelemetry.api.trace.Span request =
        context
            .getBean(io.opentelemetry.api.OpenTelemetry.class)
            .getTracer("test")
            .spanBuilder("POST /orders")
            .startSpan();
    try (io.opentelemetry.context.Scope ignored = request.makeCurrent()) {
      service.place("order-traced", "customer-t");
    } finally {
      request.end();
    }
    for (int i = 0; i < 29; i++) {
      service.place("order-" + i, "customer-" + (i % 5));
    }
    assertThatThrownBy(() -> service.placeAndFail("declined")).hasMessage("payment declined");
    service.placeWithSpringEvent("via-spring", false);
    assertThatThrownBy(() -> service.placeWithSpringEvent("via-spring-undone", true))
        .hasMessage("rolled back");
    assertThatThrownBy(() -> service.placeWithoutTransaction("loose"))
        .isInstanceOf(ConnectionStateException.class)
        .hasMessageContaining("no Spring transaction is active");

    Await.until(
        Duration.ofSeconds(30),
        "31 shipments",
        () -> count("shipment") + " shipments, audited " + listeners.audit,
        seen -> seen.startsWith("31 "));
    Await.until(Duration.ofSeconds(30), "31 audited", () -> listeners.audit.size() == 31);
    assertThat(listeners.audit).contains("via-spring").doesNotContain("via-spring-undone");
    Await.until(Duration.ofSeconds(30), "30 invoices", () -> listeners.invoices.size() == 30);
    Await.until(Duration.ofSeconds(30), "31 shipped", () -> listeners.shipped.size() == 31);
    assertThat(listeners.shipped).as("one follow-up event per order").doesNotHaveDuplicates();
    assertThat(listeners.shippingCalls.get("order-7")).as("retried once").isEqualTo(2);
    assertThat(
            jdbc.queryForObject(
                "select count(distinct order_id) from " + SCHEMA + ".shipment", Integer.class))
        .as("the JPA entities of the failed attempt rolled back")
        .isEqualTo(31);
    assertThat(count("purchase_order")).isEqualTo(31);
    assertThat(listeners.audit).doesNotContain("declined", "loose");
    assertThat(listeners.invoices).doesNotContain("declined");
    Await.until(
        Duration.ofSeconds(30),
        "shipping caught up",
        () -> boxline.admin().lag("shipping").stream().mapToLong(PartitionLag::backlog).sum() == 0);

    // Actuator: health, the endpoint's view, Micrometer meters.
    assertThat(healthStatus()).isEqualTo("UP");
    Map<String, Object> overview = endpoint.overview();
    assertThat(overview.get("topics").toString()).contains("acme/shop/orders");
    assertThat(overview.get("subscriptions").toString()).contains("shipping", "audit");
    Map<String, Object> shipping = endpoint.subscription("shipping");
    assertThat((List<?>) shipping.get("lag")).hasSize(4);
    assertThat(shipping.get("deadLetters")).isEqualTo(0L);
    // Plain maps, strings and numbers: any JSON mapper (Boot 3's Jackson 2, Boot 4's Jackson 3)
    // writes them.
    String json = new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(shipping);
    assertThat(json).contains("\"members\"", "\"partitions\"", "\"status\"");
    assertThatThrownBy(() -> endpoint.deadLetters("shipping", "redrive", null, null))
        .isInstanceOf(
            org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException.class)
        .hasMessageContaining("boxline.endpoint.write-enabled=true");
    // OpenTelemetry: the producer's trace context went into the event, the listener's span joins
    // it.
    var spans =
        context
            .getBean(io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter.class)
            .getFinishedSpanItems();
    String seen =
        spans.stream().map(sp -> sp.getName() + "/" + sp.getKind()).toList()
            + " decorators "
            + context.getBeansOfType(io.boxline.spring.ListenerDecorator.class).keySet()
            + " tracing "
            + context.getBeansOfType(io.boxline.opentelemetry.BoxlineTracing.class).keySet();
    assertThat(spans)
        .filteredOn(
            sp ->
                sp.getKind() == io.opentelemetry.api.trace.SpanKind.CONSUMER
                    && sp.getTraceId().equals(request.getSpanContext().getTraceId()))
        .as("consumer spans in the request's trace among: " + seen.replace("%", "%%"))
        .hasSizeGreaterThanOrEqualTo(1);
    assertThat(meters.getMeters().stream().map(m -> m.getId().getName()).distinct())
        .as("Boxline's meters on the application's registry")
        .contains("boxline.events.published", "boxline.sequencer.events");

    // jOOQ on the same DataSource joins the transaction as JPA does.
    assertThatThrownBy(() -> jooq.place("jooq-undone", true)).hasMessage("rolled back");
    jooq.place("jooq-1", false);
    Await.until(
        Duration.ofSeconds(30), "the jOOQ order's event", () -> listeners.audit.contains("jooq-1"));
    assertThat(listeners.audit)
        .as("same key, earlier in its partition")
        .doesNotContain("jooq-undone");
    assertThat(
            jdbc.queryForList(
                "select id from " + SCHEMA + ".purchase_order where customer = 'jooq'",
                String.class))
        .containsExactly("jooq-1");
  }
}
