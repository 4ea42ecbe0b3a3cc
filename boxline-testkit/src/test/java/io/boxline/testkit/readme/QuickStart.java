package io.boxline.testkit.readme;

import io.boxline.*;
import io.boxline.jdbc.JdbcStore;
import javax.sql.DataSource;

/** The README's quick start, verbatim (QuickStartTest checks that the two stay the same). */
public class QuickStart {
  public record OrderPlaced(String orderId, String customerId) {}

  public static void run(DataSource dataSource) throws InterruptedException {
    TopicName orders = TopicName.of("acme/shop", "orders");
    EventTypes types = EventTypes.builder()
        .register(EventType.of(OrderPlaced.class, "order.placed", orders).key(OrderPlaced::customerId))
        .build();

    try (Boxline boxline = Boxline.builder()
        .store(JdbcStore.builder(dataSource).build())       // dialect detected from the connection
        .eventTypes(types)
        .build()
        .start()) {                                         // migrates the schema, starts the sequencer
      boxline.admin().createNamespace(NamespacePath.of("acme/shop"));
      boxline.admin().createTopic(orders, 8);               // 8 partitions; a key always maps to one
      boxline.admin().createSubscription(SubscriptionSpec.of("billing", orders));

      Consumer billing = boxline.consumer("billing")
          .handler(TypedHandlers.builder(types)
              .on(OrderPlaced.class, placed -> System.out.println("charge " + placed.customerId()))
              .build())
          .start();

      boxline.inTransaction(tx -> {
        // write your business rows with tx here: they and the event commit together
        return boxline.publisher().publish(tx, new OrderPlaced("42", "c-7"));
      });

      while (billing.handledCount() == 0) {                 // the handler prints "charge c-7"
        Thread.sleep(10);
      }
      billing.close();
    }
  }
}
