package io.boxline.spring.boot;

import io.boxline.Event;
import io.boxline.EventType;
import io.boxline.TopicName;
import io.boxline.spring.BoxlineListener;
import io.boxline.spring.BoxlineOutbox;
import io.boxline.spring.BoxlineTask;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.data.jpa.repository.JpaRepository;
import org.springframework.stereotype.Component;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** A small Boot application as a user writes it: JPA entities, a service, listener beans. */
@SpringBootApplication
@org.springframework.data.jpa.repository.config.EnableJpaRepositories(
    considerNestedRepositories = true)
public class ShopApp {
  static final TopicName ORDERS = TopicName.parse("acme/shop/orders");

  public record OrderPlaced(String orderId, String customer) {}

  public record Invoice(String orderId) {}

  public record OrderShipped(String orderId) {}

  static final TopicName SHIPMENTS = TopicName.parse("acme/shop/shipments");

  @Bean
  EventType<OrderShipped> orderShipped() {
    return EventType.of(OrderShipped.class, "order.shipped", SHIPMENTS).key(OrderShipped::orderId);
  }

  /** Written by the shipping listener, in the transaction that moves its cursor. */
  @Entity
  @Table(name = "shipment")
  public static class Shipment {
    @Id String eventId;
    String orderId;

    protected Shipment() {}

    Shipment(String eventId, String orderId) {
      this.eventId = eventId;
      this.orderId = orderId;
    }
  }

  public interface Shipments extends JpaRepository<Shipment, String> {}

  /** Spans kept in memory, so the test can see what Boxline traced. */
  @Bean
  io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter spans() {
    return io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter.create();
  }

  @Bean
  io.opentelemetry.api.OpenTelemetry openTelemetry(
      io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter spans) {
    return io.opentelemetry.sdk.OpenTelemetrySdk.builder()
        .setTracerProvider(
            io.opentelemetry.sdk.trace.SdkTracerProvider.builder()
                .addSpanProcessor(
                    io.opentelemetry.sdk.trace.export.SimpleSpanProcessor.create(spans))
                .build())
        .setPropagators(
            io.opentelemetry.context.propagation.ContextPropagators.create(
                io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator.getInstance()))
        .build();
  }

  @Bean
  EventType<OrderPlaced> orderPlaced() {
    return EventType.of(OrderPlaced.class, "order.placed", ORDERS).key(OrderPlaced::customer);
  }

  @Entity
  @Table(name = "purchase_order")
  public static class PurchaseOrder {
    @Id String id;
    String customer;

    protected PurchaseOrder() {}

    PurchaseOrder(String id, String customer) {
      this.id = id;
      this.customer = customer;
    }
  }

  public interface PurchaseOrders extends JpaRepository<PurchaseOrder, String> {}

  @Service
  public static class OrderService {
    private final PurchaseOrders orders;
    private final BoxlineOutbox outbox;
    private final org.springframework.context.ApplicationEventPublisher events;

    OrderService(
        PurchaseOrders orders,
        BoxlineOutbox outbox,
        org.springframework.context.ApplicationEventPublisher events) {
      this.orders = orders;
      this.outbox = outbox;
      this.events = events;
    }

    /** Spring's own event API: a registered event type goes to Boxline in this transaction. */
    @Transactional
    public void placeWithSpringEvent(String id, boolean fail) {
      orders.save(new PurchaseOrder(id, "spring-events"));
      events.publishEvent(new OrderPlaced(id, "spring-events"));
      if (fail) {
        throw new IllegalStateException("rolled back");
      }
    }

    @Transactional
    public void place(String id, String customer) {
      orders.save(new PurchaseOrder(id, customer));
      outbox.publish(new OrderPlaced(id, customer));
      outbox.schedule("invoice", new Invoice(id));
    }

    @Transactional
    public void placeAndFail(String id) {
      place(id, "nobody");
      throw new IllegalStateException("payment declined");
    }

    public void placeWithoutTransaction(String id) {
      outbox.publish(new OrderPlaced(id, "nobody"));
    }
  }

  /** The same order, written through jOOQ on the same DataSource (Boot's jOOQ configuration). */
  @Service
  public static class JooqOrders {
    private final org.jooq.DSLContext dsl;
    private final BoxlineOutbox outbox;

    JooqOrders(org.jooq.DSLContext dsl, BoxlineOutbox outbox) {
      this.dsl = dsl;
      this.outbox = outbox;
    }

    @Transactional
    public void place(String id, boolean fail) {
      dsl.execute("insert into purchase_order (id, customer) values (?, ?)", id, "jooq");
      outbox.publish(new OrderPlaced(id, "jooq"));
      if (fail) {
        throw new IllegalStateException("rolled back");
      }
    }
  }

  /**
   * Listeners: shipping with exactly-once effects (a JPA entity and a follow-up event in the
   * cursor's transaction), an audit log, notifications, invoices.
   */
  @Component
  public static class Listeners {
    final Shipments shipments;
    final BoxlineOutbox outbox;
    final List<String> audit = new CopyOnWriteArrayList<>();
    final List<String> shipped = new CopyOnWriteArrayList<>();
    final List<String> invoices = new CopyOnWriteArrayList<>();
    final java.util.Map<String, Integer> shippingCalls =
        new java.util.concurrent.ConcurrentHashMap<>();

    Listeners(Shipments shipments, BoxlineOutbox outbox) {
      this.shipments = shipments;
      this.outbox = outbox;
    }

    @BoxlineListener(subscription = "shipping", transactional = true)
    public void ship(OrderPlaced order, Event event) {
      shipments.save(new Shipment(event.id().toString(), order.orderId()));
      outbox.publish(new OrderShipped(order.orderId()));
      // The first attempt for order-7 fails after writing: its entity and event roll back.
      if (shippingCalls.merge(order.orderId(), 1, Integer::sum) == 1
          && order.orderId().equals("order-7")) {
        throw new IllegalStateException("carrier unavailable");
      }
    }

    @BoxlineListener(subscription = "notify")
    public void notify(OrderShipped shipped) {
      this.shipped.add(shipped.orderId());
    }

    @BoxlineListener(subscription = "audit", batchSize = 20)
    public void audit(List<OrderPlaced> orders) {
      orders.forEach(o -> audit.add(o.orderId()));
    }

    @BoxlineTask("invoice")
    public void invoice(Invoice invoice) {
      invoices.add(invoice.orderId());
    }
  }
}
