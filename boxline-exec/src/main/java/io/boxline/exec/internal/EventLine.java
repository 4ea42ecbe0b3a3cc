package io.boxline.exec.internal;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.boxline.Event;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * An event as a program reads it: one JSON object on one line. The payload is text when it is UTF-8
 * ({@code payload}), else base64 ({@code payloadBase64}); the other fields are always there, null
 * when the event has none.
 */
public record EventLine(
    String id,
    String topic,
    int partition,
    long sequence,
    String key,
    String type,
    String source,
    String contentType,
    @JsonInclude(JsonInclude.Include.NON_NULL) String payload,
    @JsonInclude(JsonInclude.Include.NON_NULL) String payloadBase64,
    Map<String, String> headers,
    String createdAt) {

  private static final ObjectMapper JSON = new ObjectMapper();

  public static EventLine of(Event e) {
    String text = text(e.payload());
    return new EventLine(
        e.id().toString(),
        e.topic().toString(),
        e.partition(),
        e.sequence(),
        e.key(),
        e.type(),
        e.source(),
        e.contentType(),
        text,
        text == null && e.payload() != null
            ? Base64.getEncoder().encodeToString(e.payload())
            : null,
        e.headers(),
        e.createdAt() == null ? null : e.createdAt().toString());
  }

  /** The line, without its line break (JSON escapes every line break inside strings). */
  public static String json(Event e) {
    try {
      return JSON.writeValueAsString(of(e));
    } catch (JsonProcessingException x) {
      throw new IllegalStateException("cannot write an event as JSON", x);
    }
  }

  private static String text(byte[] payload) {
    if (payload == null) {
      return null;
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(payload))
          .toString();
    } catch (CharacterCodingException x) {
      return null;
    }
  }
}
