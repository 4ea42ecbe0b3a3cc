package io.boxline.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.Tasks;
import io.boxline.TopicName;
import io.boxline.testing.BoxlineTesting;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * How an application's own {@code @SpringBootTest} asserts "this call published and scheduled that"
 * and waits for its handlers, with no sleeps — here on H2, the same on PostgreSQL.
 */
@SpringBootTest(
    classes = ShopApp.class,
    properties = {
      "spring.datasource.url=jdbc:h2:mem:example_${random.uuid};DB_CLOSE_DELAY=-1",
      "boxline.namespaces[0]=acme/shop",
      "boxline.topics[acme/shop/orders].partitions=4",
      "boxline.topics[acme/shop/shipments].partitions=2",
      "boxline.subscriptions.shipping.topics[0]=acme/shop/orders",
      "boxline.subscriptions.audit.topics[0]=acme/shop/orders",
      "boxline.subscriptions.notify.topics[0]=acme/shop/shipments"
    })
class ApplicationTestingExampleTest {
  @Autowired ShopApp.OrderService service;
  @Autowired ShopApp.Listeners listeners;
  @Autowired Boxline boxline;

  @Test
  void aServiceCallPublishedAnEventAndScheduledATaskAndItsHandlersRan() throws Exception {
    service.place("example-1", "ada");

    // What the call published and scheduled, once committed and numbered.
    BoxlineTesting.awaitSequenced(boxline, Duration.ofSeconds(30));
    List<Event> orders = BoxlineTesting.published(boxline, TopicName.parse("acme/shop/orders"));
    assertThat(orders)
        .extracting(Event::type, Event::key)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("order.placed", "ada"));
    assertThat(orders.get(0).payloadAs(ShopApp.OrderPlaced.class).orderId()).isEqualTo("example-1");
    assertThat(BoxlineTesting.published(boxline, TopicName.parse(Tasks.TOPIC)))
        .extracting(Event::type)
        .containsExactly("invoice");

    // Every subscription caught up: the listeners (and the follow-up event's) have run.
    BoxlineTesting.awaitIdle(boxline, Duration.ofSeconds(30));
    assertThat(listeners.audit).contains("example-1");
    assertThat(listeners.shipped).contains("example-1");
    assertThat(listeners.invoices).contains("example-1");
  }
}
