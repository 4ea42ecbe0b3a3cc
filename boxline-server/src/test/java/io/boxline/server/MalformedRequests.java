package io.boxline.server;

import static io.boxline.server.Api.enc;
import static io.boxline.server.TwoTenants.subPath;
import static io.boxline.server.TwoTenants.topicPath;

import io.boxline.server.MalformedRequests.Case;
import io.boxline.server.TwoTenants.Who;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The malformed requests of {@link TenantAttackTest}, as bytes on the wire, all about a topic of
 * B's: invalid UTF-8, NUL, deeply nested JSON, bodies, headers and targets too large, bad framing,
 * {@code %00}, {@code %ZZ} and {@code ..} in paths, request lines that are no HTTP/1.1; and the
 * well-formed controls each of them differs from in one place only.
 */
final class MalformedRequests {
  /** What a malformed request may get: a 4xx with a JSON problem, or (for garbage) no answer. */
  enum Expect {
    FOUR_XX,
    FOUR_XX_OR_CLOSE
  }

  /** One malformed request: what it is, what it may get, its bytes. */
  record Case(String name, Expect expect, byte[] bytes) {}

  final RawHttp raw;
  final String admin;
  final String producer;
  final String consumer;
  final String aTopic;
  final String topic;
  final String publish;
  final String line;
  final String member;
  final byte[] event;

  /** Requests as B's callers, about B's topic {@code topic}. */
  MalformedRequests(TwoTenants tenants, String topic) {
    raw = tenants.raw;
    admin = tenants.bSecrets.get(Who.ADMIN);
    producer = tenants.bSecrets.get(Who.PRODUCER);
    consumer = tenants.bSecrets.get(Who.CONSUMER);
    aTopic = tenants.aTopics.get(0);
    this.topic = topic;
    publish = topicPath(topic) + "/events";
    line = "POST " + publish + " HTTP/1.1";
    member = subPath(tenants.bCoreSubs.get(0)) + "/members/" + enc(tenants.bMembers.get(0));
    event = ascii("{\"type\":\"Malformed\",\"key\":\"k\",\"payload\":{\"n\":1}}");
  }

  /**
   * A request on the wire: the request line, then Host, Authorization (when a token is given),
   * Connection: close, the extra header lines, a Content-Length (unless the extra headers frame the
   * body themselves) and the body.
   */
  byte[] wire(String requestLine, String token, String headers, byte[] body) {
    StringBuilder sb = new StringBuilder(requestLine).append("\r\n");
    sb.append("Host: ").append(raw.host).append(':').append(raw.port).append("\r\n");
    if (token != null) {
      sb.append("Authorization: Bearer ").append(token).append("\r\n");
    }
    sb.append("Connection: close\r\n").append(headers);
    boolean framed = headers.contains("Content-Length:") || headers.contains("Transfer-Encoding:");
    if (body != null && !framed) {
      sb.append("Content-Type: application/json\r\nContent-Length: ")
          .append(body.length)
          .append("\r\n");
    }
    sb.append("\r\n");
    return body == null ? ascii(sb.toString()) : concat(ascii(sb.toString()), body);
  }

  /** A well-formed publish. */
  byte[] publishControl() {
    return wire(line, producer, "", event);
  }

  /** A well-formed tail. */
  byte[] tailControl() {
    return wire(
        "GET " + topicPath(topic) + "/tail HTTP/1.1", consumer, "Last-Event-ID: 0:1\r\n", null);
  }

  /** A well-formed fetch. */
  byte[] fetchControl() {
    return wire("POST " + member + "/fetch HTTP/1.1", consumer, "", ascii("{}"));
  }

  /** The publish, cut a few bytes into its body. */
  byte[] partialPublish() {
    byte[] full = wire(line, producer, "", event);
    return java.util.Arrays.copyOf(full, full.length - event.length + 7);
  }

  /** Every malformed request, each with what it may get. */
  List<Case> cases() {
    List<Case> cases = new ArrayList<>();
    // Invalid UTF-8 and NUL.
    cases.add(
        new Case(
            "invalid UTF-8 in the path",
            Expect.FOUR_XX_OR_CLOSE,
            concat(
                ascii("POST " + topicPath(topic)),
                bytes(0xff, 0xfe),
                wire("/events HTTP/1.1", producer, "", event))));
    cases.add(
        new Case(
            "invalid UTF-8, percent-encoded, in the path",
            Expect.FOUR_XX,
            wire("POST " + topicPath(topic) + "%FF%FE/events HTTP/1.1", producer, "", event)));
    cases.add(
        new Case(
            "invalid UTF-8 in the Authorization header",
            Expect.FOUR_XX,
            wire(
                line,
                null,
                new String(
                    concat(
                        ascii("Authorization: Bearer "),
                        bytes(0xff, 0xfe, 0xc3, 0x28),
                        ascii("\r\n")),
                    StandardCharsets.ISO_8859_1),
                event)));
    cases.add(
        new Case(
            "invalid UTF-8 in Last-Event-ID",
            Expect.FOUR_XX,
            wire(
                "GET " + topicPath(topic) + "/tail HTTP/1.1",
                consumer,
                "Last-Event-ID: 0:\u00ff\u00fe\r\n",
                null)));
    cases.add(
        new Case(
            "invalid UTF-8 in a header name",
            Expect.FOUR_XX_OR_CLOSE,
            wire(line, producer, "X-\u00ff\u00fe: 1\r\n", event)));
    cases.add(
        new Case(
            "invalid UTF-8 in the JSON body",
            Expect.FOUR_XX,
            wire(
                line,
                producer,
                "",
                concat(
                    ascii("{\"type\":\"Malformed\",\"key\":\""),
                    bytes(0xc3, 0x28, 0xff),
                    ascii("\"}")))));
    cases.add(
        new Case(
            "NUL characters in the event's type and key",
            Expect.FOUR_XX,
            wire(
                line,
                producer,
                "",
                ascii("{\"type\":\"Malformed\\u0000\",\"key\":\"k\\u0000\"}"))));
    cases.add(
        new Case(
            "a raw NUL byte in the path",
            Expect.FOUR_XX_OR_CLOSE,
            concat(
                ascii("POST " + topicPath(topic)),
                bytes(0),
                wire("/events HTTP/1.1", producer, "", event))));
    // Deep JSON.
    cases.add(
        publishing(
            "JSON arrays nested 5,000 levels as a publish body",
            "[".repeat(5000) + "]".repeat(5000)));
    cases.add(
        publishing(
            "JSON objects nested 5,000 levels as a publish body",
            "{\"a\":".repeat(5000) + "1" + "}".repeat(5000)));
    cases.add(
        new Case(
            "JSON nested 5,000 levels as a fetch body",
            Expect.FOUR_XX,
            wire(
                "POST " + member + "/fetch HTTP/1.1",
                consumer,
                "",
                ascii("[".repeat(5000) + "]".repeat(5000)))));
    cases.add(
        new Case(
            "JSON nested 5,000 levels as a settle body",
            Expect.FOUR_XX,
            wire(
                "POST " + member + "/settle HTTP/1.1",
                consumer,
                "",
                ascii(
                    "{\"settle\":["
                        + "{\"ackId\":".repeat(5000)
                        + "\"1\""
                        + "}".repeat(5000)
                        + "]}"))));
    cases.add(
        new Case(
            "JSON nested 5,000 levels as a subscription",
            Expect.FOUR_XX,
            wire(
                "POST /v1/subscriptions HTTP/1.1",
                admin,
                "",
                ascii(
                    "{\"name\":\"tb/deep\",\"topics\":"
                        + "[".repeat(5000)
                        + "]".repeat(5000)
                        + "}"))));
    // Bodies and headers too large, bodies framed wrongly.
    cases.add(
        publishing("a 1 MiB body (maxBodyBytes is 64 KiB)", "\"" + "x".repeat(1 << 20) + "\""));
    StringBuilder chunked = new StringBuilder();
    for (int i = 0; i < 64; i++) {
      String part =
          i == 0
              ? "{\"type\":\"Malformed\",\"payload\":\"" + "y".repeat(16_000)
              : "y".repeat(16_384);
      chunked.append(Integer.toHexString(part.length())).append("\r\n").append(part).append("\r\n");
    }
    chunked.append("2\r\n\"}\r\n0\r\n\r\n");
    cases.add(
        new Case(
            "a 1 MiB chunked body",
            Expect.FOUR_XX,
            wire(
                line,
                producer,
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
                ascii(chunked.toString()))));
    cases.add(
        new Case(
            "a chunked body with a bad chunk size",
            Expect.FOUR_XX_OR_CLOSE,
            wire(
                line,
                producer,
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
                concat(ascii("ZZ\r\n"), event, ascii("\r\n0\r\n\r\n")))));
    cases.add(
        new Case(
            "a Content-Length that is not a number",
            Expect.FOUR_XX_OR_CLOSE,
            wire(
                line,
                producer,
                "Content-Type: application/json\r\nContent-Length: abc\r\n",
                event)));
    cases.add(
        new Case(
            "a negative Content-Length",
            Expect.FOUR_XX_OR_CLOSE,
            wire(
                line,
                producer,
                "Content-Type: application/json\r\nContent-Length: -5\r\n",
                event)));
    cases.add(
        new Case(
            "a 100 KB header",
            Expect.FOUR_XX_OR_CLOSE,
            wire(line, producer, "X-Pad: " + "p".repeat(100_000) + "\r\n", event)));
    StringBuilder many = new StringBuilder();
    for (int i = 0; i < 2000; i++) {
      many.append("X-Pad-").append(i).append(": ").append("q".repeat(40)).append("\r\n");
    }
    cases.add(
        new Case(
            "100 KB of headers (2,000 of them)",
            Expect.FOUR_XX_OR_CLOSE,
            wire(line, producer, many.toString(), event)));
    cases.add(
        new Case(
            "a 100 KB request target",
            Expect.FOUR_XX_OR_CLOSE,
            wire(
                "POST " + publish + "?x=" + "u".repeat(100_000) + " HTTP/1.1",
                producer,
                "",
                event)));
    cases.add(
        new Case(
            "a header line without a colon",
            Expect.FOUR_XX_OR_CLOSE,
            wire(line, producer, "NoColonHere\r\n", event)));
    // Paths: %00, %ZZ, .., targets that are no path.
    String[][] paths = {
      {"%00 in the topic", "POST", publish.replace("%2F", "%2F%00")},
      {"%00 after the topic", "POST", topicPath(topic) + "%00/events"},
      {"%ZZ in the path", "POST", topicPath(topic) + "%ZZ/events"},
      {"%ZZ as the topic", "GET", "/v1/topics/%ZZ"},
      {"a lone % in the path", "GET", "/v1/topics/%"},
      {"%ZZ in the query", "GET", topicPath(topic) + "/partitions/0/events?key=%ZZ"},
      {".. to the metrics", "GET", "/v1/../metrics"},
      {
        "encoded .. to A's topic",
        "GET",
        "/v1/topics/tb%2F..%2F" + enc(aTopic) + "/partitions/0/events"
      },
      {"raw .. to A's topic", "GET", "/v1/topics/tb/../" + aTopic + "/partitions/0/events"},
      {".. out of the console", "GET", "/console/../../etc/passwd"},
      {"encoded .. out of the console", "GET", "/console/..%2F..%2F..%2Fetc%2Fpasswd"},
      {"%2e%2e out of the console", "GET", "/console/%2e%2e/%2e%2e/etc/passwd"},
      {"an asterisk as the target", "GET", "*"},
    };
    for (String[] p : paths) {
      boolean post = p[1].equals("POST");
      cases.add(
          new Case(
              p[0],
              Expect.FOUR_XX,
              wire(
                  p[1] + " " + p[2] + " HTTP/1.1",
                  post ? producer : consumer,
                  "",
                  post ? event : null)));
    }
    cases.add(
        new Case(
            "a space in the path",
            Expect.FOUR_XX_OR_CLOSE,
            wire("POST " + topicPath(topic) + " x/events HTTP/1.1", producer, "", event)));
    // Request lines that are no HTTP/1.1.
    cases.add(
        new Case(
            "a request line without a version",
            Expect.FOUR_XX_OR_CLOSE,
            wire("GET /v1/topics", admin, "", null)));
    cases.add(
        new Case(
            "a publish whose request line has no version",
            Expect.FOUR_XX_OR_CLOSE,
            wire("POST " + publish, producer, "", event)));
    cases.add(
        new Case("a request line of one word", Expect.FOUR_XX_OR_CLOSE, ascii("GET\r\n\r\n")));
    cases.add(
        new Case(
            "binary garbage (a TLS hello)",
            Expect.FOUR_XX_OR_CLOSE,
            concat(
                bytes(0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03),
                new byte[64],
                ascii("\r\n\r\n"))));
    cases.add(
        new Case(
            "a CONNECT request",
            Expect.FOUR_XX_OR_CLOSE,
            wire("CONNECT 127.0.0.1:5432 HTTP/1.1", admin, "", null)));
    return cases;
  }

  /** A publish, to be refused, of an event whose payload is {@code payload}. */
  Case publishing(String name, String payload) {
    return new Case(
        name,
        Expect.FOUR_XX,
        wire(line, producer, "", ascii("{\"type\":\"Malformed\",\"payload\":" + payload + "}")));
  }

  static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.ISO_8859_1);
  }

  static byte[] bytes(int... values) {
    byte[] b = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      b[i] = (byte) values[i];
    }
    return b;
  }

  static byte[] concat(byte[]... parts) {
    int n = 0;
    for (byte[] p : parts) {
      n += p.length;
    }
    byte[] out = new byte[n];
    int at = 0;
    for (byte[] p : parts) {
      System.arraycopy(p, 0, out, at, p.length);
      at += p.length;
    }
    return out;
  }
}
