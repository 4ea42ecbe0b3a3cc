package io.boxline;

import java.util.LinkedHashMap;
import java.util.Map;

/** Per-call overrides for a typed publish: type, topic, key, headers, idempotency key. */
public final class PublishOptions {
  static final PublishOptions NONE = new PublishOptions();

  private TopicName topic;
  private String type;
  private String key;
  private boolean keySet;
  private String idempotencyKey;
  private java.time.Instant deliverAt;
  private final Map<String, String> headers = new LinkedHashMap<>();

  public static PublishOptions options() {
    return new PublishOptions();
  }

  public PublishOptions topic(TopicName topic) {
    this.topic = topic;
    return this;
  }

  public PublishOptions type(String type) {
    this.type = type;
    return this;
  }

  /** Overrides the registered key function; {@code null} publishes without a key. */
  public PublishOptions key(String key) {
    this.key = key;
    this.keySet = true;
    return this;
  }

  public PublishOptions idempotencyKey(String idempotencyKey) {
    this.idempotencyKey = idempotencyKey;
    return this;
  }

  /** Delayed delivery: see {@link OutgoingEvent.Builder#deliverAt}. */
  public PublishOptions deliverAt(java.time.Instant time) {
    this.deliverAt = time;
    return this;
  }

  public java.time.Instant deliverAt() {
    return deliverAt;
  }

  public PublishOptions header(String name, String value) {
    headers.put(name, value);
    return this;
  }

  public TopicName topic() {
    return topic;
  }

  public String type() {
    return type;
  }

  public boolean keySet() {
    return keySet;
  }

  public String key() {
    return key;
  }

  public String idempotencyKey() {
    return idempotencyKey;
  }

  public Map<String, String> headers() {
    return headers;
  }
}
