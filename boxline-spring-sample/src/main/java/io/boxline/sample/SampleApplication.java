package io.boxline.sample;

import io.boxline.EventType;
import io.boxline.TopicName;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;

/** An order service: orders in JPA, their events through Boxline's outbox. */
@SpringBootApplication
public class SampleApplication {
  public static void main(String[] args) {
    SpringApplication.run(SampleApplication.class, args);
  }

  /** {@link OrderPlaced} events go to the orders topic, keyed (and so ordered) by customer. */
  @Bean
  EventType<OrderPlaced> orderPlaced() {
    return EventType.of(OrderPlaced.class, "order.placed", TopicName.parse("shop/sales/orders"))
        .key(OrderPlaced::customer);
  }
}
