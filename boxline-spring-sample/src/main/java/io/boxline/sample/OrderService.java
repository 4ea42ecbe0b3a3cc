package io.boxline.sample;

import io.boxline.spring.BoxlineOutbox;
import java.math.BigDecimal;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.ResponseStatus;

@Service
public class OrderService {
  static final BigDecimal LIMIT = new BigDecimal("10000");

  /** The task payload of an {@code email-confirmation} task. */
  public record EmailConfirmation(long orderId, String customer) {}

  @ResponseStatus(HttpStatus.UNPROCESSABLE_ENTITY)
  public static class OrderRejectedException extends RuntimeException {
    OrderRejectedException(String message) {
      super(message);
    }
  }

  private final OrderRepository orders;
  private final BoxlineOutbox outbox;

  OrderService(OrderRepository orders, BoxlineOutbox outbox) {
    this.orders = orders;
    this.outbox = outbox;
  }

  /** The order, its event and its e-mail task commit together, or not at all. */
  @Transactional
  public Order place(String customer, BigDecimal amount) {
    Order order = orders.save(new Order(customer, amount));
    outbox.publish(new OrderPlaced(order.getId(), customer, amount));
    outbox.schedule("email-confirmation", new EmailConfirmation(order.getId(), customer));
    // Checked last to show the rollback: the order row, the event and the task all go.
    if (amount.compareTo(LIMIT) > 0) {
      throw new OrderRejectedException("orders over " + LIMIT + " need approval");
    }
    return order;
  }
}
