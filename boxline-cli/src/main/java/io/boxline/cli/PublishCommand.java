package io.boxline.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.Admin;
import io.boxline.NotFoundException;
import io.boxline.OutgoingEvent;
import io.boxline.PublishResult;
import io.boxline.TopicName;
import io.boxline.client.RemotePublisher;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Publishes one event from flags, or many from JSON lines on standard input, one transaction per
 * batch. A batch is read and checked whole before its transaction, so a bad line publishes nothing
 * of its batch.
 */
@Command(
    name = "publish",
    description =
        "Publish one event from flags, or JSON lines from standard input (--stdin), one"
            + " transaction per batch. Prints each event's partition, id and whether it was a duplicate"
            + " (same idempotency key).",
    footer = {
      "%nExamples:",
      "  boxline publish acme/billing/invoices --key order-42 --type InvoiceSent --payload '{\"total\":12}'",
      "  cat events.jsonl | boxline publish acme/billing/invoices --stdin --batch 500",
      "%nA JSON line: {\"key\": \"k\", \"type\": \"t\", \"payload\": {...} or \"text\", \"headers\": {...},",
      "  \"idempotencyKey\": \"…\", \"source\": \"…\", \"contentType\": \"…\", \"payloadBase64\": \"…\"}",
      "%nWithout a content type, a payload given as text (--payload, or a JSON line's \"payload\")",
      "is stored as application/json when it is a JSON document, else as text/plain;",
      "charset=utf-8; a payloadBase64 as application/octet-stream. --payload stores the text's",
      "UTF-8 bytes exactly as given."
    })
final class PublishCommand extends InspectCommands.Base {
  @Parameters(paramLabel = "TOPIC", description = "namespace/topic")
  String topic;

  @Option(names = "--key", description = "the event's key (events of a key stay in order)")
  String key;

  @Option(names = "--type", description = "the event's type")
  String type;

  @Option(names = "--source", description = "the event's source")
  String source;

  @Option(
      names = "--content-type",
      description =
          "the payload's content type (default: application/json when the payload is a JSON"
              + " document, else text/plain; charset=utf-8)")
  String contentType;

  @Option(
      names = {"-H", "--header"},
      paramLabel = "NAME=VALUE",
      description = "a header (repeat)")
  Map<String, String> headers = new LinkedHashMap<>();

  @Option(
      names = "--idempotency-key",
      description = "publish once per key: a repeat is a duplicate")
  String idempotencyKey;

  @Option(
      names = "--payload",
      description = "the payload, as text; its UTF-8 bytes are stored exactly as given")
  String payload;

  @Option(names = "--stdin", description = "read events as JSON lines from standard input")
  boolean stdin;

  @Option(names = "--batch", description = "events per transaction with --stdin (default 500)")
  int batch = 500;

  @Override
  void run(Admin admin, Connection.Session session) throws IOException {
    TopicName name = TopicName.parse(topic);
    // Over a server the publish request itself answers 404 for a missing topic: a producer's
    // token may publish but not read the admin API.
    if (!session.overServer() && admin.topic(name).isEmpty()) {
      throw new io.boxline.NotFoundException(missing(name));
    }
    if (batch < 1 || batch > 10_000) {
      throw new CliException(ExitCodes.USAGE, "--batch must be between 1 and 10000, got " + batch);
    }
    if (session.overServer() && batch > RemotePublisher.MAX_BATCH) {
      throw new CliException(
          ExitCodes.USAGE,
          "--batch over a server is at most "
              + RemotePublisher.MAX_BATCH
              + " (one request per batch), got "
              + batch);
    }
    if (stdin == (payload != null)) {
      throw new CliException(
          ExitCodes.USAGE, "give either --payload TEXT (one event) or --stdin (JSON lines)");
    }
    long published = 0;
    long duplicates = 0;
    if (!stdin) {
      OutgoingEvent.Builder b = OutgoingEvent.builder(name);
      apply(
          b,
          key,
          type,
          source,
          contentType != null ? contentType : contentTypeOf(payload),
          headers,
          idempotencyKey);
      b.payload(payload.getBytes(StandardCharsets.UTF_8));
      OutgoingEvent e = b.build();
      PublishResult r = publish(session, name, List.of(e)).get(0);
      print(r);
      return;
    }
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    long line = 0;
    List<OutgoingEvent> pending = new ArrayList<>();
    while (true) {
      String text = in.readLine();
      if (text != null) {
        line++;
        if (text.isBlank()) {
          continue;
        }
        try {
          pending.add(parse(name, text));
        } catch (RuntimeException e) {
          throw new CliException(
              ExitCodes.USAGE,
              "line "
                  + line
                  + ": "
                  + Failures.oneLine(e.getMessage())
                  + "; nothing of its batch was published ("
                  + published
                  + " events of earlier batches were)");
        }
      }
      if (pending.size() >= batch || (text == null && !pending.isEmpty())) {
        List<OutgoingEvent> chunk = List.copyOf(pending);
        pending.clear();
        List<PublishResult> results = publish(session, name, chunk);
        for (PublishResult r : results) {
          print(r);
          published++;
          duplicates += r.duplicate() ? 1 : 0;
        }
      }
      if (text == null) {
        break;
      }
    }
    if (!output.json()) {
      out().println("published " + published + " event(s), " + duplicates + " duplicate(s)");
    }
    out().flush();
  }

  /** One transaction; over a server, a missing topic is named as over a database. */
  private static List<PublishResult> publish(
      Connection.Session session, TopicName name, List<OutgoingEvent> events) {
    try {
      return session.publish(events);
    } catch (NotFoundException e) {
      if (!session.overServer()) {
        throw e;
      }
      throw new CliException(ExitCodes.NOT_FOUND, missing(name));
    }
  }

  private static String missing(TopicName name) {
    return "topic '"
        + name
        + "' does not exist; create it with 'boxline create topic "
        + name
        + " --partitions N'";
  }

  private void print(PublishResult r) {
    if (output.json()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("id", r.eventId().toString());
      m.put("topic", r.topic().toString());
      m.put("partition", r.partition());
      m.put("duplicate", r.duplicate());
      out().println(Output.json(m));
    } else {
      out()
          .println(
              r.topic()
                  + "/"
                  + r.partition()
                  + "  "
                  + r.eventId()
                  + (r.duplicate() ? "  duplicate" : ""));
    }
  }

  private static OutgoingEvent parse(TopicName topic, String line) {
    JsonNode n;
    try {
      n = Output.JSON.readTree(line);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage());
    }
    if (!n.isObject()) {
      throw new IllegalArgumentException(
          "a line must be a JSON object, e.g. {\"key\":\"k\",\"payload\":{}}");
    }
    for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (!List.of(
              "key",
              "type",
              "source",
              "contentType",
              "headers",
              "idempotencyKey",
              "payload",
              "payloadBase64")
          .contains(f)) {
        throw new IllegalArgumentException(
            "unknown field '"
                + f
                + "'; fields are key, type, source, contentType, headers,"
                + " idempotencyKey, payload, payloadBase64");
      }
    }
    Map<String, String> headers = new LinkedHashMap<>();
    JsonNode h = n.get("headers");
    if (h != null && !h.isNull()) {
      if (!h.isObject()) {
        throw new IllegalArgumentException("headers must be an object of strings");
      }
      h.fields().forEachRemaining(e -> headers.put(e.getKey(), e.getValue().asText()));
    }
    OutgoingEvent.Builder b = OutgoingEvent.builder(topic);
    JsonNode p = n.get("payload");
    JsonNode p64 = n.get("payloadBase64");
    // Without a content type: JSON for a JSON value or a text that is one, UTF-8 text for other
    // text, the library's application/octet-stream for bytes and for no payload.
    String type = text(n, "contentType");
    if (p64 != null && !p64.isNull()) {
      b.payload(Base64.getDecoder().decode(p64.asText()));
    } else if (p == null || p.isNull()) {
      b.payload(new byte[0]);
    } else if (p.isTextual()) {
      b.payload(p.asText().getBytes(StandardCharsets.UTF_8));
      type = type != null ? type : contentTypeOf(p.asText());
    } else {
      b.payload(p.toString().getBytes(StandardCharsets.UTF_8));
      type = type != null ? type : JSON_CONTENT_TYPE;
    }
    apply(
        b,
        text(n, "key"),
        text(n, "type"),
        text(n, "source"),
        type,
        headers,
        text(n, "idempotencyKey"));
    return b.build();
  }

  static final String JSON_CONTENT_TYPE = "application/json";
  static final String TEXT_CONTENT_TYPE = "text/plain; charset=utf-8";

  /** Strict JSON: one document and nothing after it. */
  private static final com.fasterxml.jackson.databind.ObjectReader STRICT_JSON =
      new com.fasterxml.jackson.databind.ObjectMapper()
          .reader()
          .with(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  /**
   * The content type of a payload given as text when none is: application/json when the text is a
   * JSON document (an object, array, string, number, true, false or null, and nothing else), else
   * UTF-8 text.
   */
  static String contentTypeOf(String text) {
    if (text.isBlank()) {
      return TEXT_CONTENT_TYPE;
    }
    try {
      JsonNode parsed = STRICT_JSON.readTree(text);
      return parsed == null || parsed.isMissingNode() ? TEXT_CONTENT_TYPE : JSON_CONTENT_TYPE;
    } catch (IOException e) {
      return TEXT_CONTENT_TYPE;
    }
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  private static void apply(
      OutgoingEvent.Builder b,
      String key,
      String type,
      String source,
      String contentType,
      Map<String, String> headers,
      String idempotencyKey) {
    if (key != null) {
      b.key(key);
    }
    if (type != null) {
      b.type(type);
    }
    if (source != null) {
      b.source(source);
    }
    if (contentType != null) {
      b.contentType(contentType);
    }
    if (!headers.isEmpty()) {
      b.headers(headers);
    }
    if (idempotencyKey != null) {
      b.idempotencyKey(idempotencyKey);
    }
  }
}
