package io.boxline.sample;

import java.math.BigDecimal;
import java.net.URI;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

@RestController
@RequestMapping("/orders")
public class OrderController {
  public record NewOrder(String customer, BigDecimal amount) {}

  private final OrderService service;
  private final OrderRepository orders;

  OrderController(OrderService service, OrderRepository orders) {
    this.service = service;
    this.orders = orders;
  }

  @PostMapping
  public ResponseEntity<Order> create(@RequestBody NewOrder body) {
    Order order = service.place(body.customer(), body.amount());
    return ResponseEntity.created(URI.create("/orders/" + order.getId())).body(order);
  }

  @GetMapping("/{id}")
  public ResponseEntity<Order> get(@PathVariable long id) {
    return ResponseEntity.of(orders.findById(id));
  }
}
