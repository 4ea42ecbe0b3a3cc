package io.boxline.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.boxline.Event;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * How a command prints: aligned tables for people ({@code table}, the default) or JSON for scripts
 * ({@code json}: one document, or one object per line for streams such as tail).
 */
final class Output {
  enum Format {
    table,
    json
  }

  static final ObjectMapper JSON =
      new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

  @Option(
      names = {"-o", "--output"},
      paramLabel = "FORMAT",
      description = "table (default) or json")
  Format format = Format.table;

  boolean json() {
    return format == Format.json;
  }

  static String json(Object value) {
    try {
      return JSON.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write JSON", e);
    }
  }

  /** A table with a header row, columns padded to their widest cell. */
  static final class Table {
    private final List<String[]> rows = new ArrayList<>();
    private final int columns;

    Table(String... header) {
      columns = header.length;
      rows.add(header);
    }

    Table row(Object... cells) {
      String[] r = new String[columns];
      for (int i = 0; i < columns; i++) {
        Object c = i < cells.length ? cells[i] : null;
        r[i] = c == null ? "-" : c.toString();
      }
      rows.add(r);
      return this;
    }

    boolean isEmpty() {
      return rows.size() == 1;
    }

    void print(PrintWriter out) {
      int[] width = new int[columns];
      for (String[] r : rows) {
        for (int i = 0; i < columns; i++) {
          width[i] = Math.max(width[i], r[i].length());
        }
      }
      for (String[] r : rows) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < columns; i++) {
          b.append(r[i]);
          if (i < columns - 1) {
            b.append(" ".repeat(width[i] - r[i].length() + 2));
          }
        }
        out.println(b.toString().stripTrailing());
      }
      out.flush();
    }
  }

  /** A retention policy in a few words: "forever", or its limits. */
  static String retention(io.boxline.RetentionPolicy r) {
    if (r == null) {
      return null;
    }
    List<String> parts = new ArrayList<>();
    if (r.maxAge() != null) {
      parts.add("max age " + io.boxline.Names.durationText(r.maxAge()));
    }
    if (r.maxEventsPerPartition() > 0) {
      parts.add("max " + r.maxEventsPerPartition() + "/partition");
    }
    if (parts.isEmpty()) {
      return "forever";
    }
    parts.add(r.keepUnconsumed() ? "keeps unconsumed" : "deletes unconsumed");
    return String.join(", ", parts);
  }

  static String time(Instant t) {
    return t == null ? null : t.toString();
  }

  /** "3m12s"-style age of {@code t} at {@code now}, or "-". */
  static String age(Instant t, Instant now) {
    if (t == null) {
      return "-";
    }
    Duration d = Duration.between(t, now);
    if (d.isNegative()) {
      d = Duration.ZERO;
    }
    long s = d.getSeconds();
    if (s < 60) {
      return d.toMillis() < 10_000 ? String.format("%.1fs", d.toMillis() / 1000.0) : s + "s";
    }
    if (s < 3600) {
      return s / 60 + "m" + s % 60 + "s";
    }
    if (s < 86_400) {
      return s / 3600 + "h" + (s % 3600) / 60 + "m";
    }
    return s / 86_400 + "d" + (s % 86_400) / 3600 + "h";
  }

  /** The payload as text when it is UTF-8, else null (then {@link #payloadBase64} carries it). */
  static String payloadText(byte[] payload) {
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
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  /** An event as a JSON-ready map: payload as text when UTF-8, else as payloadBase64. */
  static Map<String, Object> event(Event e) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", e.id().toString());
    m.put("topic", e.topic().toString());
    m.put("partition", e.partition());
    m.put("sequence", e.sequence());
    m.put("key", e.key());
    m.put("type", e.type());
    m.put("source", e.source());
    m.put("contentType", e.contentType());
    String text = payloadText(e.payload());
    if (text != null) {
      m.put("payload", text);
    } else if (e.payload() != null) {
      m.put("payloadBase64", Base64.getEncoder().encodeToString(e.payload()));
    }
    m.put("headers", e.headers());
    m.put("createdAt", time(e.createdAt()));
    return m;
  }

  /** One line for people: position, time, key, type and the payload (cut at 200 characters). */
  static String pretty(Event e) {
    String text = payloadText(e.payload());
    String body =
        text == null
            ? "<" + (e.payload() == null ? 0 : e.payload().length) + " bytes>"
            : text.replace('\n', ' ');
    if (body.length() > 200) {
      body = body.substring(0, 200) + "…";
    }
    return e.topic()
        + "/"
        + e.partition()
        + "/"
        + e.sequence()
        + "  "
        + e.createdAt()
        + "  key="
        + (e.key() == null ? "-" : e.key())
        + "  type="
        + (e.type() == null ? "-" : e.type())
        + "  "
        + body;
  }
}
