package io.boxline;

/**
 * A stored event cannot be delivered as it is: its row holds something no writer of this version
 * produces (headers that are not a JSON object of strings, an empty type), typically because it was
 * written by hand, by a trigger that bypassed the {@code publish()} function's checks, or by
 * another version. The handler is never called with it; each attempt fails with this exception, so
 * it is dead-lettered under the retry policy (with this message as its reason), its key waiting
 * behind it as behind any failing event, while the rest of the partition flows.
 */
public class MalformedEventException extends SerializationException {
  public MalformedEventException(String message) {
    super(message, null);
  }
}
