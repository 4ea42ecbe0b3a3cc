package io.boxline;

/** A payload exceeds {@code maxPayloadBytes}. Nothing was written. */
public class PayloadTooLargeException extends ValidationException {
  private final int size;
  private final int limit;

  public PayloadTooLargeException(String topic, int size, int limit) {
    super(
        "payload of "
            + size
            + " bytes for topic '"
            + topic
            + "' exceeds the limit of "
            + limit
            + " bytes; store large data elsewhere and publish a reference, or raise maxPayloadBytes");
    this.size = size;
    this.limit = limit;
  }

  public int size() {
    return size;
  }

  public int limit() {
    return limit;
  }
}
