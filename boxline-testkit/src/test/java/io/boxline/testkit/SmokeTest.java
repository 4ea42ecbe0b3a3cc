package io.boxline.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class SmokeTest {
  record OrderPlaced(String orderId, int amount) {}

  @Test
  void publishesAndConsumes() {
    TopicName orders = TopicName.of("acme/shop", "orders");
    EventTypes types =
        EventTypes.builder()
            .register(
                EventType.of(OrderPlaced.class, "order.placed", orders).key(OrderPlaced::orderId))
            .build();
    try (TestDatabase db = TestDatabase.create("smoke")) {
      Boxline boxline = db.boxline(types);
      boxline.admin().createNamespace(NamespacePath.of("acme/shop"));
      boxline.admin().createTopic(orders, 4);
      boxline.admin().createSubscription(SubscriptionSpec.of("billing", orders));
      List<Event> seen = new CopyOnWriteArrayList<>();
      boxline.consumer("billing").handler(seen::add).start();
      for (int i = 0; i < 20; i++) {
        int n = i;
        boxline.inTransaction(
            tx -> boxline.publisher().publish(tx, new OrderPlaced("o" + (n % 5), n)));
      }
      Await.until(Duration.ofSeconds(10), "20 events handled", () -> seen.size() >= 20);
      assertThat(seen).hasSize(20);
      assertThat(seen.get(0).payloadAs(OrderPlaced.class).orderId()).startsWith("o");
    }
  }
}
