package io.boxline.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a plain socket, one request per connection ({@code Connection: close}), for tests
 * that send what {@link java.net.http.HttpClient} refuses to send: any method, repeated or odd
 * headers, raw bytes in the request line, bodies that do not match their headers. The answer is
 * read up to a deadline; an event stream is read for a short while and then cut.
 */
final class RawHttp {
  final String host;
  final int port;

  RawHttp(String baseUrl) {
    URI u = URI.create(baseUrl);
    this.host = u.getHost();
    this.port = u.getPort();
  }

  /** What came back: a status of -1 means no status line was read (closed, reset or timed out). */
  static final class Response {
    int status = -1;
    String statusLine = "";
    final Map<String, List<String>> headers = new LinkedHashMap<>();
    String headerText = "";
    byte[] body = new byte[0];
    boolean timedOut;
    boolean streamCut;
    String error;
    long millis;
    int bytesRead;

    String header(String name) {
      List<String> v = headers.get(name.toLowerCase(Locale.ROOT));
      return v == null || v.isEmpty() ? null : v.get(0);
    }

    String bodyText() {
      return new String(body, StandardCharsets.UTF_8);
    }

    /** The whole answer as text: status line, headers and body. */
    String text() {
      return headerText + "\n" + bodyText();
    }

    boolean answered() {
      return status >= 0;
    }

    @Override
    public String toString() {
      if (!answered()) {
        return "(no answer: "
            + (timedOut ? "timed out" : "closed")
            + (error == null ? "" : ", " + error)
            + ", "
            + bytesRead
            + " bytes read)";
      }
      return headerText.strip() + "\n\n" + truncate(bodyText(), 700);
    }
  }

  /** A request being built; its bytes are exactly what goes on the wire. */
  static final class Request {
    String method = "GET";
    String target = "/";
    String version = "HTTP/1.1";
    final List<String[]> headers = new ArrayList<>();
    byte[] body;

    Request(String method, String target) {
      this.method = method;
      this.target = target;
    }

    Request header(String name, String value) {
      headers.add(new String[] {name, value});
      return this;
    }

    Request body(String json) {
      this.body = json == null ? null : json.getBytes(StandardCharsets.UTF_8);
      return this;
    }

    boolean hasHeader(String name) {
      return headers.stream().anyMatch(h -> h[0].equalsIgnoreCase(name));
    }

    byte[] bytes(String host, int port) {
      StringBuilder sb = new StringBuilder();
      sb.append(method).append(' ').append(target).append(' ').append(version).append("\r\n");
      if (!hasHeader("Host")) {
        sb.append("Host: ").append(host).append(':').append(port).append("\r\n");
      }
      for (String[] h : headers) {
        sb.append(h[0]).append(": ").append(h[1]).append("\r\n");
      }
      if (body != null && !hasHeader("Content-Length") && !hasHeader("Transfer-Encoding")) {
        sb.append("Content-Length: ").append(body.length).append("\r\n");
      }
      if (!hasHeader("Connection")) {
        sb.append("Connection: close\r\n");
      }
      sb.append("\r\n");
      byte[] head = sb.toString().getBytes(StandardCharsets.UTF_8);
      if (body == null) {
        return head;
      }
      byte[] all = new byte[head.length + body.length];
      System.arraycopy(head, 0, all, 0, head.length);
      System.arraycopy(body, 0, all, head.length, body.length);
      return all;
    }

    /** What a person reads in a failure report. */
    String describe() {
      StringBuilder sb = new StringBuilder();
      sb.append(method).append(' ').append(target).append(' ').append(version);
      for (String[] h : headers) {
        String v = h[1];
        sb.append("\n  ").append(h[0]).append(": ").append(truncate(v, 120));
      }
      if (body != null) {
        sb.append("\n  body: ").append(truncate(new String(body, StandardCharsets.UTF_8), 400));
      }
      return sb.toString();
    }
  }

  Response send(Request r, int timeoutMillis, int streamMillis) {
    Response out = send(r.bytes(host, port), r.method.equals("HEAD"), timeoutMillis, streamMillis);
    if (out.status > 0
        && out.error == null
        && !out.timedOut
        && out.header("Content-Encoding") == null) {
      ApiContract.SERVED.check(
          r.method,
          r.target,
          out.status,
          out.header("Content-Type"),
          out.streamCut ? "" : out.bodyText());
    }
    return out;
  }

  /**
   * Sends these bytes on a new connection and reads the answer: up to its Content-Length, the end
   * of its chunks, or the connection's end; an event stream for {@code streamMillis}; everything
   * within {@code timeoutMillis}.
   */
  Response send(byte[] request, boolean head, int timeoutMillis, int streamMillis) {
    Response out = new Response();
    long t0 = System.nanoTime();
    long deadline = t0 + timeoutMillis * 1_000_000L;
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 5000);
      s.setTcpNoDelay(true);
      OutputStream os = s.getOutputStream();
      try {
        os.write(request);
        os.flush();
      } catch (IOException e) {
        out.error = "while sending: " + e.getMessage();
      }
      read(s, s.getInputStream(), out, head, deadline, streamMillis);
    } catch (IOException e) {
      if (out.error == null) {
        out.error = e.getClass().getSimpleName() + ": " + e.getMessage();
      }
    }
    out.millis = (System.nanoTime() - t0) / 1_000_000;
    return out;
  }

  private static void read(
      Socket s, InputStream in, Response out, boolean head, long deadline, int streamMillis)
      throws IOException {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    byte[] chunk = new byte[16384];
    int headerEnd = -1;
    long streamDeadline = Long.MAX_VALUE;
    while (true) {
      long now = System.nanoTime();
      long until = Math.min(deadline, streamDeadline);
      if (now >= until) {
        if (now >= streamDeadline) {
          out.streamCut = true;
        } else {
          out.timedOut = true;
        }
        break;
      }
      s.setSoTimeout((int) Math.max(1, (until - now) / 1_000_000));
      int n;
      try {
        n = in.read(chunk);
      } catch (SocketTimeoutException e) {
        continue;
      } catch (IOException e) {
        out.error = e.getClass().getSimpleName() + ": " + e.getMessage();
        break;
      }
      if (n < 0) {
        break;
      }
      buf.write(chunk, 0, n);
      out.bytesRead = buf.size();
      byte[] b = buf.toByteArray();
      if (headerEnd < 0) {
        headerEnd = headerEnd(b, 0);
        // Interim 1xx answers (100 Continue) come before the real one.
        while (headerEnd >= 0 && startsWith1xx(b)) {
          byte[] rest = new byte[b.length - headerEnd];
          System.arraycopy(b, headerEnd, rest, 0, rest.length);
          buf.reset();
          buf.write(rest);
          b = rest;
          headerEnd = headerEnd(b, 0);
        }
        if (headerEnd >= 0) {
          parseHead(new String(b, 0, headerEnd, StandardCharsets.ISO_8859_1), out);
          String ct = out.header("Content-Type");
          if (ct != null && ct.startsWith("text/event-stream")) {
            streamDeadline = System.nanoTime() + streamMillis * 1_000_000L;
          }
        }
      }
      if (headerEnd >= 0 && complete(b, headerEnd, out, head)) {
        break;
      }
    }
    byte[] b = buf.toByteArray();
    if (headerEnd < 0) {
      if (b.length > 0) {
        // Something that is not an HTTP answer: keep it as the body so a report shows it.
        out.body = b;
        out.headerText = "(no HTTP head)";
      }
      out.status = -1;
      return;
    }
    byte[] body = new byte[b.length - headerEnd];
    System.arraycopy(b, headerEnd, body, 0, body.length);
    String te = out.header("Transfer-Encoding");
    if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
      body = dechunk(body);
    }
    out.body = head ? new byte[0] : body;
  }

  private static boolean startsWith1xx(byte[] b) {
    return b.length > 12
        && new String(b, 0, 10, StandardCharsets.ISO_8859_1).startsWith("HTTP/1.1 1");
  }

  private static int headerEnd(byte[] b, int from) {
    for (int i = from; i + 3 < b.length; i++) {
      if (b[i] == '\r' && b[i + 1] == '\n' && b[i + 2] == '\r' && b[i + 3] == '\n') {
        return i + 4;
      }
    }
    return -1;
  }

  private static void parseHead(String head, Response out) {
    out.headerText = head;
    String[] lines = head.split("\r\n");
    out.statusLine = lines[0];
    String[] parts = lines[0].split(" ", 3);
    try {
      out.status = parts.length >= 2 ? Integer.parseInt(parts[1]) : -1;
    } catch (NumberFormatException e) {
      out.status = -1;
    }
    for (int i = 1; i < lines.length; i++) {
      int c = lines[i].indexOf(':');
      if (c > 0) {
        out.headers
            .computeIfAbsent(
                lines[i].substring(0, c).trim().toLowerCase(Locale.ROOT), k -> new ArrayList<>())
            .add(lines[i].substring(c + 1).trim());
      }
    }
  }

  private static boolean complete(byte[] b, int headerEnd, Response out, boolean head) {
    if (head || out.status == 204 || out.status == 304) {
      return true;
    }
    String te = out.header("Transfer-Encoding");
    if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
      return chunkedComplete(b, headerEnd);
    }
    String cl = out.header("Content-Length");
    if (cl != null) {
      try {
        return b.length - headerEnd >= Long.parseLong(cl.trim());
      } catch (NumberFormatException e) {
        return false;
      }
    }
    return false;
  }

  private static boolean chunkedComplete(byte[] b, int at) {
    int i = at;
    while (true) {
      int eol = indexOfCrlf(b, i);
      if (eol < 0) {
        return false;
      }
      String sizeLine = new String(b, i, eol - i, StandardCharsets.ISO_8859_1).trim();
      int semi = sizeLine.indexOf(';');
      long size;
      try {
        size = Long.parseLong(semi < 0 ? sizeLine : sizeLine.substring(0, semi), 16);
      } catch (NumberFormatException e) {
        return true; // garbage: stop reading
      }
      if (size == 0) {
        return indexOfCrlf(b, eol + 2) >= 0;
      }
      i = eol + 2 + (int) size + 2;
      if (i > b.length) {
        return false;
      }
    }
  }

  private static byte[] dechunk(byte[] b) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int i = 0;
    while (i < b.length) {
      int eol = indexOfCrlf(b, i);
      if (eol < 0) {
        break;
      }
      String sizeLine = new String(b, i, eol - i, StandardCharsets.ISO_8859_1).trim();
      int semi = sizeLine.indexOf(';');
      int size;
      try {
        size = Integer.parseInt(semi < 0 ? sizeLine : sizeLine.substring(0, semi), 16);
      } catch (NumberFormatException e) {
        break;
      }
      if (size == 0) {
        break;
      }
      int from = eol + 2;
      int len = Math.min(size, b.length - from);
      out.write(b, from, len);
      i = from + size + 2;
    }
    return out.toByteArray();
  }

  private static int indexOfCrlf(byte[] b, int from) {
    for (int i = from; i + 1 < b.length; i++) {
      if (b[i] == '\r' && b[i + 1] == '\n') {
        return i;
      }
    }
    return -1;
  }

  static String truncate(String s, int max) {
    if (s == null) {
      return "null";
    }
    s = s.replace("\r", "\\r");
    return s.length() <= max ? s : s.substring(0, max) + "…(" + s.length() + " chars)";
  }
}
