package io.boxline.sample;

import jakarta.persistence.Entity;
import jakarta.persistence.EnumType;
import jakarta.persistence.Enumerated;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.math.BigDecimal;

@Entity
@Table(name = "orders")
public class Order {
  public enum Status {
    PLACED,
    SHIPPED
  }

  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  private Long id;

  private String customer;
  private BigDecimal amount;

  @Enumerated(EnumType.STRING)
  private Status status = Status.PLACED;

  protected Order() {}

  public Order(String customer, BigDecimal amount) {
    this.customer = customer;
    this.amount = amount;
  }

  public Long getId() {
    return id;
  }

  public String getCustomer() {
    return customer;
  }

  public BigDecimal getAmount() {
    return amount;
  }

  public Status getStatus() {
    return status;
  }

  void shipped() {
    status = Status.SHIPPED;
  }
}
