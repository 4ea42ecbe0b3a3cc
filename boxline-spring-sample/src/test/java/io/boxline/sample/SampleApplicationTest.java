package io.boxline.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.atLeast;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.verify;

import io.boxline.Boxline;
import io.boxline.FailureCounts;
import io.boxline.PartitionLag;
import io.boxline.sample.OrderService.EmailConfirmation;
import io.boxline.testkit.Await;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.bean.override.mockito.MockitoSpyBean;

/**
 * The sample application on the local PostgreSQL, in a schema of its own, driven through HTTP:
 * orders, their shipments and e-mails exactly once, a rejected order leaving no trace, actuator
 * health and the boxline endpoint.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
class SampleApplicationTest {
  static final String URL = "jdbc:postgresql://127.0.0.1:5432/postgres";
  static final String SCHEMA =
      "bxsample_" + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);

  @DynamicPropertySource
  static void properties(DynamicPropertyRegistry r) {
    r.add("spring.datasource.url", () -> URL + "?currentSchema=" + SCHEMA);
    r.add("spring.datasource.username", () -> "postgres");
    r.add("spring.jpa.hibernate.ddl-auto", () -> "create");
    r.add("spring.jpa.properties.hibernate.default_schema", () -> SCHEMA);
    r.add("spring.jpa.properties.hibernate.hbm2ddl.create_namespaces", () -> "true");
    r.add("boxline.schema", () -> SCHEMA);
  }

  /** An order as the API returns it. */
  record OrderJson(long id, String customer, BigDecimal amount, String status) {}

  @Autowired TestRestTemplate http;
  @Autowired OrderRepository orders;
  @Autowired ShipmentRepository shipments;
  @Autowired ConfirmationEmails emails;
  @Autowired Boxline boxline;
  @MockitoSpyBean Warehouse warehouse;

  private static Connection connect() throws SQLException {
    return DriverManager.getConnection(URL, "postgres", "");
  }

  private static boolean postgresUp;
  private static ConfigurableApplicationContext application;

  @BeforeAll
  static void requirePostgres() {
    try (Connection c = connect()) {
      postgresUp = c.isValid(5);
    } catch (SQLException e) {
      fail(
          "PostgreSQL is not reachable at "
              + URL
              + " as postgres ("
              + e.getMessage()
              + "); start it with: pg_ctlcluster --skip-systemctl-redirect 15 main start");
    }
  }

  @Autowired
  void remember(ConfigurableApplicationContext context) {
    application = context;
  }

  @AfterAll
  static void dropSchema() throws SQLException {
    if (!postgresUp) {
      return;
    }
    if (application != null) {
      application.stop(); // consumers and workers first; @DirtiesContext closes it afterwards
    }
    try (Connection c = connect();
        var s = c.createStatement()) {
      s.execute("drop schema if exists " + SCHEMA + " cascade");
    }
  }

  @Test
  void everyAcceptedOrderShipsAndIsConfirmedOnceAndARejectedOneLeavesNoTrace() {
    // The warehouse fails the first dispatch: that shipment rolls back with the cursor and the
    // event is handled again.
    doThrow(new IllegalStateException("warehouse offline"))
        .doCallRealMethod()
        .when(warehouse)
        .dispatch(any());

    List<Long> accepted = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      var order = new OrderController.NewOrder("customer-" + (i % 4), new BigDecimal(100 + i));
      if (i == 7) { // over the limit: saved, then rejected and rolled back
        order = new OrderController.NewOrder("big-spender", new BigDecimal("25000"));
        ResponseEntity<String> rejected = http.postForEntity("/orders", order, String.class);
        assertThat(rejected.getStatusCode()).isEqualTo(HttpStatus.UNPROCESSABLE_ENTITY);
        continue;
      }
      ResponseEntity<OrderJson> created = http.postForEntity("/orders", order, OrderJson.class);
      assertThat(created.getStatusCode()).isEqualTo(HttpStatus.CREATED);
      assertThat(created.getHeaders().getLocation()).hasPath("/orders/" + created.getBody().id());
      accepted.add(created.getBody().id());
    }
    assertThat(accepted).hasSize(19).doesNotHaveDuplicates();

    Await.until(
        Duration.ofSeconds(60),
        "19 shipments and 19 e-mails",
        () -> shipments.count() == 19 && emails.sent().size() == 19);
    Await.until(
        Duration.ofSeconds(60),
        "shipping caught up with nothing retrying or dead-lettered",
        () -> {
          long backlog =
              boxline.admin().lag("shipping").stream().mapToLong(PartitionLag::backlog).sum();
          FailureCounts f = boxline.admin().failures("shipping");
          return backlog == 0 && f.retrying() == 0 && f.deadLetters() == 0;
        });

    assertThat(boxline.admin().lag("shipping").stream().mapToLong(PartitionLag::lastSequence).sum())
        .as("events on the orders topic: none for the rejected order")
        .isEqualTo(19);
    assertThat(orders.findAll())
        .extracting(Order::getId)
        .containsExactlyInAnyOrderElementsOf(accepted);
    assertThat(orders.findAll()).allMatch(o -> o.getStatus() == Order.Status.SHIPPED);
    assertThat(shipments.findAll())
        .extracting(Shipment::getOrderId)
        .containsExactlyInAnyOrderElementsOf(accepted);
    assertThat(emails.sent())
        .extracting(EmailConfirmation::orderId)
        .containsExactlyInAnyOrderElementsOf(accepted);
    assertThat(emails.sent()).extracting(EmailConfirmation::customer).doesNotContain("big-spender");
    // The failed dispatch ran and was repeated: 19 successful calls after it.
    verify(warehouse, atLeast(20)).dispatch(any());

    ResponseEntity<OrderJson> one =
        http.getForEntity("/orders/" + accepted.get(3), OrderJson.class);
    assertThat(one.getStatusCode()).isEqualTo(HttpStatus.OK);
    assertThat(one.getBody().customer()).isEqualTo("customer-3");
    assertThat(one.getBody().amount()).isEqualByComparingTo("103");
    assertThat(one.getBody().status()).isEqualTo("SHIPPED");
    assertThat(http.getForEntity("/orders/999999", String.class).getStatusCode())
        .isEqualTo(HttpStatus.NOT_FOUND);
  }

  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void actuatorShowsHealthAndTheBoxlineEndpoint() {
    ResponseEntity<Map> health = http.getForEntity("/actuator/health", Map.class);
    assertThat(health.getStatusCode()).isEqualTo(HttpStatus.OK);
    assertThat(health.getBody()).containsEntry("status", "UP");
    Map<String, Object> components = (Map<String, Object>) health.getBody().get("components");
    assertThat((Map<String, Object>) components.get("boxline")).containsEntry("status", "UP");

    ResponseEntity<Map> overview = http.getForEntity("/actuator/boxline", Map.class);
    assertThat(overview.getStatusCode()).isEqualTo(HttpStatus.OK);
    assertThat((List<Map<String, Object>>) overview.getBody().get("topics"))
        .anySatisfy(t -> assertThat(t).containsEntry("name", "shop/sales/orders"));
    List<Map<String, Object>> subscriptions =
        (List<Map<String, Object>>) overview.getBody().get("subscriptions");
    assertThat(subscriptions).extracting(s -> s.get("name")).contains("shipping");
    assertThat(subscriptions)
        .filteredOn(s -> s.get("name").equals("shipping"))
        .singleElement()
        .satisfies(s -> assertThat((List<?>) s.get("lag")).hasSize(4));
  }

  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void theBoxlineEndpointShowsASubscription() {
    ResponseEntity<Map> shipping = http.getForEntity("/actuator/boxline/shipping", Map.class);
    assertThat(shipping.getStatusCode()).isEqualTo(HttpStatus.OK);
    assertThat(shipping.getBody()).containsEntry("name", "shipping").containsKeys("group");
    assertThat((List<?>) shipping.getBody().get("lag")).hasSize(4);
    assertThat(shipping.getBody()).containsEntry("deadLetters", 0);
  }

  @Test
  void theBoxlineEndpointRefusesWritesWhileWriteEnabledIsFalse() {
    ResponseEntity<String> redrive =
        http.postForEntity("/actuator/boxline/shipping", Map.of("action", "redrive"), String.class);
    assertThat(redrive.getStatusCode().is2xxSuccessful()).as(redrive.toString()).isFalse();
  }
}
