package io.boxline.spring;

import io.boxline.BatchHandler;
import io.boxline.EventHandler;
import io.boxline.TransactionalHandler;

/**
 * Wraps the handlers {@link BoxlineListenerRegistrar} builds for listener beans (tracing spans,
 * logging context). Beans of this type are applied in their order; the default methods leave a
 * handler as it is.
 */
public interface ListenerDecorator {
  default EventHandler handler(String subscription, EventHandler handler) {
    return handler;
  }

  default BatchHandler batchHandler(String subscription, BatchHandler handler) {
    return handler;
  }

  default TransactionalHandler transactionalHandler(
      String subscription, TransactionalHandler handler) {
    return handler;
  }
}
