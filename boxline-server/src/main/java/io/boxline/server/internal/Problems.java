package io.boxline.server.internal;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import java.util.List;

/**
 * Error answers and the checks that produce them. Every refusal is a JSON problem ({@link Problem})
 * whose message names the problem and the fix and quotes nothing internal: no exception class, no
 * parser internals, no SQL; a 500 carries only a correlation id that the log repeats.
 */
final class Problems {
  private Problems() {}

  /**
   * The body of every error answer; {@code settled} and {@code refused} only in a settle's 409 that
   * refused some partitions (the others were settled).
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Problem(
      int status,
      String error,
      String message,
      String correlationId,
      Integer settled,
      List<PartitionRef> refused) {
    Problem(int status, String error, String message, String correlationId) {
      this(status, error, message, correlationId, null, null);
    }
  }

  /** A partition named in an answer. */
  record PartitionRef(String topic, int partition) {}

  /** The partitions a settle refused, and the events of the others it settled. */
  record Refusal(int settled, List<PartitionRef> refused) {}

  /** A value from the request, shortened and with control characters replaced, for a message. */
  static String quote(String s) {
    if (s == null) {
      return "";
    }
    StringBuilder b = new StringBuilder();
    s.codePoints()
        .limit(80)
        .forEach(cp -> b.appendCodePoint(Character.isISOControl(cp) ? '?' : cp));
    return s.codePointCount(0, s.length()) > 80 ? b + "…" : b.toString();
  }

  /** What is wrong with a JSON text, without the parser's class names or internal wording. */
  static String jsonError(JsonProcessingException e) {
    JsonLocation at = e.getLocation();
    String where =
        at == null || at.getLineNr() < 0
            ? ""
            : " at line " + at.getLineNr() + ", column " + at.getColumnNr();
    String why = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
    String lower = why.toLowerCase(java.util.Locale.ROOT);
    String reason;
    if (lower.contains("duplicate field")) {
      reason = "a key appears twice in one object";
    } else if (lower.contains("nesting depth")) {
      reason = "it is nested too deeply";
    } else if (lower.contains("trailing token")) {
      reason = "something follows the JSON value";
    } else if (lower.contains("end-of-input") || lower.contains("end of input")) {
      reason = "it ends too early";
    } else if (lower.contains("utf-8") || lower.contains("utf8")) {
      reason = "it is not valid UTF-8";
    } else if (lower.contains("unexpected character") || lower.contains("unrecognized token")) {
      reason = "an unexpected character";
    } else if (lower.contains("control character")) {
      reason = "a control character inside a string must be escaped";
    } else if (lower.contains("number") || lower.contains("numeric")) {
      reason = "a number is not valid";
    } else {
      reason = "it is not well-formed";
    }
    return reason + where;
  }
}
