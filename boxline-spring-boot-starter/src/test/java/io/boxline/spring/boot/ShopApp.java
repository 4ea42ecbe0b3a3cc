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
import org.springframework.jdbc.core.JdbcTemplate;
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

    OrderService(PurchaseOrders orders, BoxlineOutbox outbox) {
      this.orders = orders;
      this.outbox = outbox;
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

  /** Listeners: a shipping projection with exactly-once effects, an audit log, invoices. */
  @Component
  public static class Listeners {
    final JdbcTemplate jdbc;
    final List<String> audit = new CopyOnWriteArrayList<>();
    final List<String> invoices = new CopyOnWriteArrayList<>();

    Listeners(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @BoxlineListener(subscription = "shipping", transactional = true)
    public void ship(OrderPlaced order, Event event) {
      jdbc.update(
          "insert into shipment (event_id, order_id) values (?, ?)",
          event.id().toString(),
          order.orderId());
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
