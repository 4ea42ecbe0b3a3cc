package io.boxline.spring.modulithtest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Event;
import io.boxline.testkit.Await;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Boxline as the target of Spring Modulith's event externalization, on H2 with Modulith's JDBC
 * publication registry: an {@code @Externalized} event published in a committed transaction reaches
 * Boxline's topic under its routing key; one whose transaction rolled back never does.
 */
@SpringBootTest(
    classes = ModulithApp.class,
    properties = {
      "spring.datasource.url=jdbc:h2:mem:modulith_${random.uuid};DB_CLOSE_DELAY=-1",
      "spring.modulith.events.jdbc.schema-initialization.enabled=true",
      "spring.modulith.events.externalization.enabled=true",
      "boxline.namespaces[0]=acme/modulith",
      "boxline.topics[acme/modulith/orders].partitions=2",
      "boxline.subscriptions.downstream.topics[0]=acme/modulith/orders"
    })
class ModulithExternalizationTest {

  @Autowired ModulithApp.Orders orders;
  @Autowired ModulithApp.Downstream downstream;

  @Test
  void externalizedEventsOfCommittedTransactionsReachBoxlineUnderTheirRoutingKey() {
    String id = UUID.randomUUID().toString();
    orders.complete(id, "ada", false);
    assertThatThrownBy(() -> orders.complete("undone", "bob", true)).hasMessage("rolled back");
    orders.complete("later", "ada", false);

    Await.until(
        Duration.ofSeconds(30), "two externalized events", () -> downstream.seen.size() == 2);
    Event first =
        downstream.seen.stream()
            .filter(e -> e.payloadAs(ModulithApp.OrderCompleted.class).orderId().equals(id))
            .findFirst()
            .orElseThrow();
    assertThat(first.key()).isEqualTo("ada");
    assertThat(first.type()).isEqualTo("OrderCompleted");
    assertThat(first.contentType()).isEqualTo("application/json");
    assertThat(downstream.seen)
        .extracting(e -> e.payloadAs(ModulithApp.OrderCompleted.class).orderId())
        .containsExactlyInAnyOrder(id, "later");
  }
}
