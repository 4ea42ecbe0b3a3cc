package io.boxline.sample;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/** Stands in for the warehouse system; when it throws, the shipment rolls back and is retried. */
@Component
public class Warehouse {
  private static final Logger log = LoggerFactory.getLogger(Warehouse.class);

  public void dispatch(Shipment shipment) {
    log.info("dispatching order {}", shipment.getOrderId());
  }
}
