package io.boxline.rabbitmq.internal;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.ShutdownSignalException;
import io.boxline.Event;
import io.boxline.relay.CloudEventsMapping;
import io.boxline.relay.SinkException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/** Publishes batches with confirms over a lazily (re)opened connection and pooled channels. */
public final class AmqpDelivery {
  private static final System.Logger LOG = System.getLogger(AmqpDelivery.class.getName());

  private final ConnectionFactory factory;
  private final Function<Event, String> exchange;
  private final Function<Event, String> routingKey;
  private final CloudEventsMapping mapping;
  private final String headerPrefix;
  private final Duration confirmTimeout;
  private final boolean persistent;
  private final boolean mandatory;
  private final ConcurrentLinkedDeque<Pooled> idle = new ConcurrentLinkedDeque<>();
  private Connection connection; // guarded by this
  private volatile boolean closed;

  public AmqpDelivery(
      ConnectionFactory factory,
      Function<Event, String> exchange,
      Function<Event, String> routingKey,
      CloudEventsMapping mapping,
      String headerPrefix,
      Duration confirmTimeout,
      boolean persistent,
      boolean mandatory) {
    this.factory = factory;
    this.exchange = exchange;
    this.routingKey = routingKey;
    this.mapping = mapping;
    this.headerPrefix = headerPrefix;
    this.confirmTimeout = confirmTimeout;
    this.persistent = persistent;
    this.mandatory = mandatory;
  }

  /** A channel in confirm mode and the message ids the broker returned as unroutable on it. */
  private static final class Pooled {
    final Channel channel;
    final Set<String> returned = ConcurrentHashMap.newKeySet();

    Pooled(Channel channel) {
      this.channel = channel;
    }
  }

  /** One event ready to publish. */
  private record Message(
      Event event, String exchange, String routingKey, AMQP.BasicProperties props, byte[] body) {}

  public void send(List<Event> events) {
    if (closed) {
      throw SinkException.retryable(events, "the RabbitMQ sink is closed", null);
    }
    SinkException.Builder failures = SinkException.builder();
    List<Message> messages = new ArrayList<>(events.size());
    for (Event e : events) {
      try {
        messages.add(message(e));
      } catch (RuntimeException ex) {
        failures.permanent(e, "cannot map the event to an AMQP message: " + ex).cause(ex);
      }
    }
    if (!messages.isEmpty()) {
      publish(messages, failures);
    }
    if (!failures.isEmpty()) {
      throw failures.build();
    }
  }

  private void publish(List<Message> messages, SinkException.Builder failures) {
    Pooled pooled;
    try {
      pooled = borrow();
    } catch (IOException | TimeoutException | RuntimeException ex) {
      allRetryable(messages, failures, "cannot open a channel to RabbitMQ: " + describe(ex), ex);
      return;
    }
    boolean healthy = false;
    try {
      pooled.returned.clear();
      Channel ch = pooled.channel;
      for (Message m : messages) {
        ch.basicPublish(m.exchange(), m.routingKey(), mandatory, m.props(), m.body());
      }
      ch.waitForConfirmsOrDie(confirmTimeout.toMillis());
      healthy = true;
    } catch (InterruptedException ex) {
      Thread.currentThread().interrupt();
      allRetryable(messages, failures, "interrupted while waiting for confirms", ex);
    } catch (IOException | TimeoutException | ShutdownSignalException ex) {
      allRetryable(messages, failures, "not confirmed: " + describe(ex), ex);
    } finally {
      release(pooled, healthy);
    }
    if (healthy && !pooled.returned.isEmpty()) {
      for (int i = 0; i < messages.size(); i++) {
        Message m = messages.get(i);
        if (pooled.returned.contains(m.event().id().toString())) {
          String reason =
              "unroutable: no queue is bound to exchange '"
                  + m.exchange()
                  + "' for routing key '"
                  + m.routingKey()
                  + "'";
          failures.retryable(m.event(), reason);
          for (Message later : messages.subList(i + 1, messages.size())) {
            failures.retryable(
                later.event(),
                "published again after an earlier message came back (" + reason + ")");
          }
          break;
        }
      }
    }
  }

  private static void allRetryable(
      List<Message> messages, SinkException.Builder failures, String reason, Throwable cause) {
    for (Message m : messages) {
      failures.retryable(m.event(), reason);
    }
    failures.cause(cause);
  }

  private Message message(Event e) {
    String ex = exchange.apply(e);
    String rk = routingKey.apply(e);
    if (ex == null) {
      throw new IllegalArgumentException("the exchange function returned null");
    }
    if (rk == null) {
      throw new IllegalArgumentException("the routing key function returned null");
    }
    Map<String, Object> headers = new LinkedHashMap<>();
    byte[] body;
    String contentType;
    if (mapping.mode() == CloudEventsMapping.Mode.STRUCTURED) {
      body = mapping.toJson(e);
      contentType = CloudEventsMapping.JSON_CONTENT_TYPE;
    } else {
      body = e.payload() == null ? new byte[0] : e.payload();
      contentType = e.contentType();
      mapping.binaryAttributes(e).forEach((name, value) -> headers.put(headerPrefix + name, value));
    }
    AMQP.BasicProperties props =
        new AMQP.BasicProperties.Builder()
            .messageId(e.id().toString())
            .type(e.type())
            .timestamp(Date.from(e.createdAt()))
            .deliveryMode(persistent ? 2 : 1)
            .contentType(contentType)
            .headers(headers)
            .build();
    return new Message(e, ex, rk, props, body);
  }

  private Pooled borrow() throws IOException, TimeoutException {
    Pooled p;
    while ((p = idle.pollFirst()) != null) {
      if (p.channel.isOpen()) {
        return p;
      }
    }
    Channel ch = connection().createChannel();
    if (ch == null) {
      throw new IOException("RabbitMQ refused another channel (channel_max reached)");
    }
    ch.confirmSelect();
    Pooled created = new Pooled(ch);
    ch.addReturnListener(
        r -> created.returned.add(String.valueOf(r.getProperties().getMessageId())));
    return created;
  }

  private synchronized Connection connection() throws IOException, TimeoutException {
    if (closed) {
      throw new IOException("the RabbitMQ sink is closed");
    }
    if (connection == null || !connection.isOpen()) {
      if (connection != null) {
        connection.abort(1000);
        LOG.log(Level.INFO, "rabbitmq sink: reconnecting");
      }
      connection = factory.newConnection("boxline-relay");
    }
    return connection;
  }

  private void release(Pooled p, boolean healthy) {
    if (healthy && !closed && p.channel.isOpen()) {
      idle.addFirst(p);
      return;
    }
    try {
      if (p.channel.isOpen()) {
        p.channel.abort();
      }
    } catch (IOException | RuntimeException e) {
      // already broken
    }
  }

  private static String describe(Throwable t) {
    String m = t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    return m.length() > 1000 ? m.substring(0, 1000) : m;
  }

  public void close() {
    Connection c;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      c = connection;
      connection = null;
    }
    Pooled p;
    while ((p = idle.pollFirst()) != null) {
      release(p, false);
    }
    if (c != null && c.isOpen()) {
      try {
        c.close(5000);
      } catch (IOException | RuntimeException e) {
        c.abort(1000);
      }
    }
  }
}
