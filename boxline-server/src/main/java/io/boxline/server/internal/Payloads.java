package io.boxline.server.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.util.RawValue;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Payloads travel byte for byte. On the way in, a JSON payload is cut out of the request body as
 * the sender wrote it (digits, key order, spacing and repeated keys kept), never parsed and written
 * again. On the way out, a stored JSON payload is placed into the answer as stored; one that is not
 * valid JSON, is nested deeper than {@value #MAX_INLINE_DEPTH} levels or starts with a byte-order
 * mark goes out as base64 instead, so no stored payload can make a read fail.
 */
final class Payloads {
  /** Deeper JSON goes out as base64: clients' parsers commonly stop near 1,000 levels. */
  static final int MAX_INLINE_DEPTH = 500;

  private static final JsonFactory VALIDATE =
      JsonFactory.builder()
          .streamReadConstraints(
              StreamReadConstraints.builder().maxNestingDepth(MAX_INLINE_DEPTH + 1).build())
          .build();

  private Payloads() {}

  /**
   * Whether a reader asked for every payload as base64: {@code json} (the default, given as null)
   * places JSON payloads inline as stored, {@code base64} sends every payload as its stored bytes.
   */
  static boolean base64(String requested) {
    if (requested == null || requested.equals("json")) {
      return false;
    }
    if (requested.equals("base64")) {
      return true;
    }
    throw ApiException.badRequest(
        "payload must be json (JSON payloads inline, as stored) or base64 (every payload as its"
            + " stored bytes), got '"
            + Problems.quote(requested)
            + "'");
  }

  /** Whether a content type says JSON. */
  static boolean isJson(String contentType) {
    return contentType != null
        && (contentType.startsWith("application/json") || contentType.contains("+json"));
  }

  /** The stored payload to place into an answer as is, or null when it goes out as base64. */
  static RawValue inline(byte[] payload, String contentType) {
    if (payload == null || payload.length == 0 || !isJson(contentType)) {
      return null;
    }
    if ((payload[0] & 0xFF) == 0xEF || (payload[0] & 0xFF) == 0xFE || (payload[0] & 0xFF) == 0xFF) {
      return null; // a byte-order mark: valid for a parser, not inside another document
    }
    try (JsonParser p = VALIDATE.createParser(payload)) {
      JsonToken t = p.nextToken();
      if (t == null) {
        return null;
      }
      int depth = 0;
      while (true) {
        if (t.isStructStart()) {
          depth++;
        } else if (t.isStructEnd()) {
          depth--;
        } else if (t == JsonToken.VALUE_STRING) {
          p.getText(); // reads the whole string, so bad UTF-8 or escapes are found
        }
        if (depth == 0) {
          break;
        }
        t = p.nextToken();
        if (t == null) {
          return null;
        }
      }
      if (p.nextToken() != null) {
        return null;
      }
    } catch (IOException e) {
      return null;
    }
    return new RawValue(new String(payload, StandardCharsets.UTF_8));
  }

  /**
   * The bytes of each event's {@code payload} value exactly as in the body, in the order of the
   * events (null for an event without one), after checking that no event, header object or batch
   * repeats a key. {@code batch}: the body is {@code {"events": [...]}}.
   */
  static List<byte[]> cut(byte[] body, boolean batch) {
    List<byte[]> out = new ArrayList<>();
    try (JsonParser p = RequestBodies.PUBLISH_MAPPER.getFactory().createParser(body)) {
      p.nextToken();
      if (!batch) {
        out.add(event(p, body, ""));
        return out;
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        p.nextToken();
        if (!p.currentName().equals("events")) {
          p.skipChildren();
          continue;
        }
        int i = 0;
        while (p.nextToken() == JsonToken.START_OBJECT) {
          out.add(event(p, body, "events[" + i++ + "]: "));
        }
      }
      return out;
    } catch (IOException e) {
      // The body parsed before; a second reading cannot fail.
      throw new IllegalStateException("the body could not be read again", e);
    }
  }

  /** One event object, from its START_OBJECT to its END_OBJECT. */
  private static byte[] event(JsonParser p, byte[] body, String at) throws IOException {
    Set<String> seen = new HashSet<>();
    int start = -1;
    byte[] payload = null;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      if (start >= 0) {
        payload = span(body, start, (int) p.currentTokenLocation().getByteOffset());
        start = -1;
      }
      String name = p.currentName();
      if (!seen.add(name)) {
        throw ApiException.badRequest(
            at + "the field '" + Problems.quote(name) + "' appears twice; give it once");
      }
      JsonToken v = p.nextToken();
      if (name.equals("payload")) {
        start = (int) p.currentTokenLocation().getByteOffset();
        p.skipChildren();
      } else if (name.equals("headers") && v == JsonToken.START_OBJECT) {
        Set<String> headers = new HashSet<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          if (!headers.add(p.currentName())) {
            throw ApiException.badRequest(
                at + "the header '" + Problems.quote(p.currentName()) + "' appears twice");
          }
          p.nextToken();
          p.skipChildren();
        }
      } else {
        p.skipChildren();
      }
    }
    if (start >= 0) {
      payload = span(body, start, (int) p.currentTokenLocation().getByteOffset());
    }
    return payload;
  }

  /** From the value's first byte to just before the next token, less whitespace and the comma. */
  private static byte[] span(byte[] body, int start, int nextToken) {
    int end = nextToken;
    while (end > start && isSpace(body[end - 1])) {
      end--;
    }
    if (end > start && body[end - 1] == ',') {
      end--;
    }
    while (end > start && isSpace(body[end - 1])) {
      end--;
    }
    return java.util.Arrays.copyOfRange(body, start, end);
  }

  private static boolean isSpace(byte b) {
    return b == ' ' || b == '\t' || b == '\n' || b == '\r';
  }
}
