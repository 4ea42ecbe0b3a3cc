package io.boxline;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * A raw event to publish: bytes plus metadata. The escape hatch when the typed registry does not
 * fit (payloads produced elsewhere, pass-through relays). Build with {@link #builder(TopicName)}.
 */
public final class OutgoingEvent {
  private final UUID id;
  private final TopicName topic;
  private final String key;
  private final String type;
  private final String source;
  private final String contentType;
  private final byte[] payload;
  private final Map<String, String> headers;
  private final String idempotencyKey;
  private final java.time.Instant deliverAt;

  private OutgoingEvent(Builder b) {
    this.id = b.id == null ? UUID.randomUUID() : b.id;
    this.topic = Objects.requireNonNull(b.topic, "topic");
    if (b.type == null || b.type.isBlank()) {
      throw new ValidationException(
          "event type must be set for an event on topic '" + topic + "'; call .type(\"...\")");
    }
    this.type = Names.requireLabel("event type", b.type);
    this.key = Names.requireStorable("event key", b.key, Names.MAX_KEY_LENGTH);
    this.source = Names.requireStorable("event source", b.source, Names.MAX_SOURCE_LENGTH);
    this.contentType =
        b.contentType == null
            ? "application/octet-stream"
            : Names.requireLabel("content type", b.contentType);
    this.payload = b.payload == null ? new byte[0] : b.payload;
    b.headers.forEach(OutgoingEvent::requireHeader);
    this.headers = Map.copyOf(b.headers);
    if (b.idempotencyKey != null && b.idempotencyKey.isEmpty()) {
      throw new ValidationException(
          "idempotency key must not be empty; leave it unset (null) for an event without one");
    }
    this.idempotencyKey =
        Names.requireStorable("idempotency key", b.idempotencyKey, Names.MAX_KEY_LENGTH);
    this.deliverAt = Names.requireStorable("deliverAt", b.deliverAt);
  }

  /** Header names are labels, values storable strings (see {@link Names}). */
  static void requireHeader(String name, String value) {
    Names.requireLabel("header name", name);
    Names.requireStorable(
        "value of header '" + Names.abbreviate(name) + "'", value, Names.MAX_HEADER_VALUE_LENGTH);
  }

  public static Builder builder(TopicName topic) {
    return new Builder(topic);
  }

  public UUID id() {
    return id;
  }

  public TopicName topic() {
    return topic;
  }

  /**
   * The ordering key, or null: keyless events are spread over partitions and have no relative
   * order.
   */
  public String key() {
    return key;
  }

  public String type() {
    return type;
  }

  public String source() {
    return source;
  }

  public String contentType() {
    return contentType;
  }

  /** The payload bytes (not copied; do not modify). */
  public byte[] payload() {
    return payload;
  }

  public Map<String, String> headers() {
    return headers;
  }

  public String idempotencyKey() {
    return idempotencyKey;
  }

  /** When the event is to be delivered, or null for at once. */
  public java.time.Instant deliverAt() {
    return deliverAt;
  }

  /** Builder for {@link OutgoingEvent}. */
  public static final class Builder {
    private UUID id;
    private final TopicName topic;
    private String key;
    private String type;
    private String source;
    private String contentType;
    private byte[] payload;
    private final Map<String, String> headers = new LinkedHashMap<>();
    private String idempotencyKey;
    private java.time.Instant deliverAt;

    private Builder(TopicName topic) {
      this.topic = Objects.requireNonNull(topic, "topic");
    }

    /** Sets the event id (default: a random UUID). */
    public Builder id(UUID id) {
      this.id = id;
      return this;
    }

    public Builder key(String key) {
      this.key = key;
      return this;
    }

    public Builder type(String type) {
      this.type = type;
      return this;
    }

    public Builder source(String source) {
      this.source = source;
      return this;
    }

    public Builder contentType(String contentType) {
      this.contentType = contentType;
      return this;
    }

    public Builder payload(byte[] payload) {
      this.payload = payload;
      return this;
    }

    public Builder header(String name, String value) {
      if (name == null) {
        throw new ValidationException("a header name is null; headers need a name");
      }
      if (value == null) {
        throw new ValidationException(
            "header '"
                + Names.abbreviate(name)
                + "' has a null value; header values are strings: omit the header or give it a"
                + " value");
      }
      headers.put(name, value);
      return this;
    }

    public Builder headers(Map<String, String> values) {
      values.forEach(this::header);
      return this;
    }

    /**
     * Publishing twice with the same idempotency key on the same topic stores one event; the second
     * call's {@link PublishResult#duplicate()} is true.
     */
    public Builder idempotencyKey(String idempotencyKey) {
      this.idempotencyKey = idempotencyKey;
      return this;
    }

    /**
     * Delivers the event at {@code time} rather than at once. Until then each subscription parks it
     * without holding up its partition; later events of the same key wait behind it, so per-key
     * order is kept. The time is kept to the microsecond (finer digits are dropped, as the
     * databases store it); one outside {@link Names#MIN_INSTANT} to {@link Names#MAX_INSTANT} is
     * refused.
     */
    public Builder deliverAt(java.time.Instant time) {
      this.deliverAt = time;
      return this;
    }

    public OutgoingEvent build() {
      return new OutgoingEvent(this);
    }
  }
}
