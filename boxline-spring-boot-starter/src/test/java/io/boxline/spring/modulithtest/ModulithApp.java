package io.boxline.spring.modulithtest;

import io.boxline.Event;
import io.boxline.spring.BoxlineListener;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.modulith.events.Externalized;
import org.springframework.stereotype.Component;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** A Spring Modulith application whose externalized events go to Boxline. */
@SpringBootApplication
public class ModulithApp {
  /** A Modulith event, externalized to a Boxline topic keyed by its customer. */
  @Externalized("acme/modulith/orders::#{customer()}")
  public record OrderCompleted(String orderId, String customer) {}

  @Service
  public static class Orders {
    private final ApplicationEventPublisher events;

    Orders(ApplicationEventPublisher events) {
      this.events = events;
    }

    @Transactional
    public void complete(String id, String customer, boolean fail) {
      events.publishEvent(new OrderCompleted(id, customer));
      if (fail) {
        throw new IllegalStateException("rolled back");
      }
    }
  }

  @Component
  public static class Downstream {
    final List<Event> seen = new CopyOnWriteArrayList<>();

    @BoxlineListener(subscription = "downstream")
    public void on(Event e) {
      seen.add(e);
    }
  }
}
