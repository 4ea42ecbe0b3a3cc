package io.boxline.relay;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import io.boxline.Event;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import io.cloudevents.jackson.JsonFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Maps Boxline events to <a href="https://cloudevents.io">CloudEvents</a> 1.0, the envelope every
 * broker sink puts around the payload.
 *
 * <table>
 *   <caption>Attributes</caption>
 *   <tr><th>CloudEvents</th><th>from the Boxline event</th></tr>
 *   <tr><td>{@code id}</td><td>{@link Event#id()} (stable across redeliveries: de-duplicate on
 *       it)</td></tr>
 *   <tr><td>{@code source}</td><td>{@link Event#source()} when it is a URI-reference, else the
 *       configured {@linkplain Builder#defaultSource default source}, else {@code /<topic>}</td></tr>
 *   <tr><td>{@code type}</td><td>{@link Event#type()}</td></tr>
 *   <tr><td>{@code subject}</td><td>{@link Event#key()} (absent for keyless events)</td></tr>
 *   <tr><td>{@code time}</td><td>{@link Event#createdAt()}</td></tr>
 *   <tr><td>{@code datacontenttype}, {@code data}</td><td>{@link Event#contentType()}, {@link
 *       Event#payload()}</td></tr>
 *   <tr><td>{@code traceparent}, {@code tracestate}</td><td>the W3C trace context headers, when
 *       present (distributed tracing extension)</td></tr>
 *   <tr><td>{@code boxlinetopic}, {@code boxlinepartition}, {@code boxlinesequence}</td><td>where
 *       the event sits in Boxline (sequence as a decimal string: it can exceed 32 bits)</td></tr>
 *   <tr><td>other extensions</td><td>every other header whose name is a valid extension name
 *       (lower-case {@code a-z0-9}, at most 20 characters), unless {@linkplain
 *       Builder#headerExtensions turned off}</td></tr>
 * </table>
 *
 * <p>Sinks use {@link Mode#BINARY} by default: the payload travels as the message body and the
 * attributes as protocol headers ({@link #binaryAttributes}), so consumers that know nothing about
 * CloudEvents still get the plain payload. {@link Mode#STRUCTURED} sends the whole event as a JSON
 * document ({@link #toJson}, media type {@value #JSON_CONTENT_TYPE}). Thread-safe.
 */
public final class CloudEventsMapping {
  /** How the event travels. */
  public enum Mode {
    /** Payload as the body, attributes as headers (default). */
    BINARY,
    /** The whole event as a CloudEvents JSON document. */
    STRUCTURED
  }

  /** Media type of a structured CloudEvents JSON document. */
  public static final String JSON_CONTENT_TYPE = "application/cloudevents+json";

  /** Media type of a JSON array of CloudEvents (the batch format). */
  public static final String JSON_BATCH_CONTENT_TYPE = "application/cloudevents-batch+json";

  /** Extension attribute with the Boxline topic ({@code acme/shop/orders}). */
  public static final String TOPIC_EXTENSION = "boxlinetopic";

  /** Extension attribute with the Boxline partition (an integer). */
  public static final String PARTITION_EXTENSION = "boxlinepartition";

  /** Extension attribute with the event's sequence in its partition (a decimal string). */
  public static final String SEQUENCE_EXTENSION = "boxlinesequence";

  /** W3C trace context extension attributes, copied from the event headers of the same name. */
  public static final String TRACEPARENT = "traceparent";

  public static final String TRACESTATE = "tracestate";

  private static final Pattern EXTENSION_NAME = Pattern.compile("[a-z0-9]{1,20}");
  private static final Set<String> RESERVED =
      Set.of(
          "id",
          "source",
          "specversion",
          "type",
          "datacontenttype",
          "dataschema",
          "subject",
          "time",
          "data",
          "data_base64",
          TOPIC_EXTENSION,
          PARTITION_EXTENSION,
          SEQUENCE_EXTENSION);
  private static final DateTimeFormatter RFC3339 = DateTimeFormatter.ISO_OFFSET_DATE_TIME;
  private static final JsonFactory JSON_FACTORY = new JsonFactory();
  private static final CloudEventsMapping DEFAULTS = builder().build();

  private final URI defaultSource;
  private final Mode mode;
  private final boolean headerExtensions;
  private final JsonFormat json = new JsonFormat();
  private final JsonFormat jsonBase64 = new JsonFormat().withForceJsonDataToBase64();

  private CloudEventsMapping(Builder b) {
    this.defaultSource = b.defaultSource;
    this.mode = b.mode;
    this.headerExtensions = b.headerExtensions;
  }

  /** Binary mode, source {@code /<topic>} when the event has none, headers as extensions. */
  public static CloudEventsMapping defaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  public Mode mode() {
    return mode;
  }

  /** The event as a CloudEvent (SDK object), payload as data. */
  public CloudEvent toCloudEvent(Event event) {
    CloudEventBuilder b =
        CloudEventBuilder.v1()
            .withId(event.id().toString())
            .withSource(source(event))
            .withType(event.type())
            .withTime(OffsetDateTime.ofInstant(event.createdAt(), ZoneOffset.UTC));
    if (event.key() != null) {
      b.withSubject(event.key());
    }
    if (event.payload() != null && event.payload().length > 0) {
      b.withData(event.contentType(), event.payload());
    } else if (event.contentType() != null) {
      b.withDataContentType(event.contentType());
    }
    extensions(event).forEach(b::withExtension);
    b.withExtension(TOPIC_EXTENSION, event.topic().toString());
    b.withExtension(PARTITION_EXTENSION, event.partition());
    b.withExtension(SEQUENCE_EXTENSION, Long.toString(event.sequence()));
    return b.build();
  }

  /**
   * Every context attribute except {@code datacontenttype} (which each protocol carries in its own
   * content-type field) as name → canonical string, in a stable order: {@code specversion, id,
   * source, type, subject, time}, then the extensions. Binary-mode sinks put these into headers
   * with their binding's prefix ({@code ce-} for HTTP, {@code ce_} for Kafka, {@code cloudEvents_}
   * for AMQP).
   */
  public Map<String, String> binaryAttributes(Event event) {
    Map<String, String> out = new LinkedHashMap<>();
    out.put("specversion", "1.0");
    out.put("id", event.id().toString());
    out.put("source", source(event).toString());
    out.put("type", event.type());
    if (event.key() != null) {
      out.put("subject", event.key());
    }
    out.put("time", RFC3339.format(OffsetDateTime.ofInstant(event.createdAt(), ZoneOffset.UTC)));
    out.putAll(extensions(event));
    out.put(TOPIC_EXTENSION, event.topic().toString());
    out.put(PARTITION_EXTENSION, Integer.toString(event.partition()));
    out.put(SEQUENCE_EXTENSION, Long.toString(event.sequence()));
    return out;
  }

  /**
   * The event as a structured CloudEvents JSON document ({@value #JSON_CONTENT_TYPE}). A JSON
   * payload is embedded as {@code data}; any other payload, or one labelled JSON that does not
   * parse, travels base64-encoded as {@code data_base64}.
   */
  public byte[] toJson(Event event) {
    CloudEvent ce = toCloudEvent(event);
    if (isJsonContentType(event.contentType()) && !isJsonDocument(event.payload())) {
      // The SDK embeds data labelled JSON verbatim; a payload that does not parse would break the
      // document, so it travels base64-encoded instead.
      return jsonBase64.serialize(ce);
    }
    return json.serialize(ce);
  }

  /**
   * Whether a media type says JSON ({@code application/json}, {@code text/json}, {@code +json}).
   */
  static boolean isJsonContentType(String contentType) {
    if (contentType == null) {
      return true; // CloudEvents: data without a content type is JSON
    }
    String base = contentType;
    int semicolon = base.indexOf(';');
    if (semicolon >= 0) {
      base = base.substring(0, semicolon);
    }
    base = base.trim().toLowerCase(Locale.ROOT);
    return base.equals("application/json") || base.equals("text/json") || base.endsWith("+json");
  }

  private static boolean isJsonDocument(byte[] payload) {
    if (payload == null || payload.length == 0) {
      return true; // no data at all
    }
    try (JsonParser p = JSON_FACTORY.createParser(payload)) {
      if (p.nextToken() == null) {
        return false;
      }
      p.skipChildren();
      return p.nextToken() == null;
    } catch (IOException e) {
      return false;
    }
  }

  /** A JSON array of structured events ({@value #JSON_BATCH_CONTENT_TYPE}), in list order. */
  public byte[] toJsonBatch(List<Event> events) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(256 * events.size() + 2);
    out.write('[');
    for (int i = 0; i < events.size(); i++) {
      if (i > 0) {
        out.write(',');
      }
      out.writeBytes(toJson(events.get(i)));
    }
    out.write(']');
    return out.toByteArray();
  }

  private URI source(Event event) {
    if (event.source() != null && !event.source().isBlank()) {
      try {
        return new URI(event.source());
      } catch (URISyntaxException e) {
        // not a URI-reference: fall back to the default below
      }
    }
    return defaultSource != null ? defaultSource : URI.create("/" + event.topic());
  }

  private Map<String, String> extensions(Event event) {
    Map<String, String> out = new LinkedHashMap<>();
    Map<String, String> headers = event.headers();
    if (headers == null || headers.isEmpty()) {
      return out;
    }
    for (Map.Entry<String, String> h : headers.entrySet()) {
      String name = h.getKey().toLowerCase(Locale.ROOT);
      if (h.getValue() == null) {
        continue;
      }
      boolean trace = name.equals(TRACEPARENT) || name.equals(TRACESTATE);
      if (trace
          || (headerExtensions
              && !RESERVED.contains(name)
              && EXTENSION_NAME.matcher(name).matches())) {
        out.putIfAbsent(name, h.getValue());
      }
    }
    return out;
  }

  /** Settings of a {@link CloudEventsMapping}. */
  public static final class Builder {
    private URI defaultSource;
    private Mode mode = Mode.BINARY;
    private boolean headerExtensions = true;

    private Builder() {}

    /**
     * Source of events published without one (default {@code /<topic>}, e.g. {@code
     * /acme/shop/orders}); typically a URN or URL naming the producing service.
     */
    public Builder defaultSource(URI source) {
      this.defaultSource = Objects.requireNonNull(source, "source");
      return this;
    }

    /** Binary (default) or structured content mode. */
    public Builder mode(Mode mode) {
      this.mode = Objects.requireNonNull(mode, "mode");
      return this;
    }

    /**
     * Whether event headers other than the trace context become extension attributes when their
     * name is a valid one (default true).
     */
    public Builder headerExtensions(boolean enabled) {
      this.headerExtensions = enabled;
      return this;
    }

    public CloudEventsMapping build() {
      return new CloudEventsMapping(this);
    }
  }
}
