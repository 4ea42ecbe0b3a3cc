package io.boxline.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/**
 * A lean HTTP/1.1 client: one kept-alive connection, one request at a time, answers read by their
 * Content-Length. It stands for the efficient clients of other languages (Go's net/http, curl,
 * wrk), so S1 can tell the server's cost from the JDK HttpClient's on the same two cores.
 */
final class KeepAlivePost implements AutoCloseable {
  private final Socket socket;
  private final OutputStream out;
  private final InputStream in;
  private final String host;

  KeepAlivePost(String base) throws IOException {
    URI u = URI.create(base);
    socket = new Socket(u.getHost(), u.getPort());
    socket.setTcpNoDelay(true);
    out = socket.getOutputStream();
    in = new BufferedInputStream(socket.getInputStream(), 16 * 1024);
    host = u.getHost() + ":" + u.getPort();
  }

  /** An answer: its status and body. */
  record Answer(int status, String body) {}

  /** POSTs {@code json} to {@code path}; returns the status after reading the whole answer. */
  int post(String path, String json) throws IOException {
    long length = send(path, json);
    in.skipNBytes(length);
    return lastStatus;
  }

  /** POSTs {@code json} to {@code path}; returns the status and the body. */
  Answer call(String path, String json) throws IOException {
    long length = send(path, json);
    return new Answer(lastStatus, new String(in.readNBytes((int) length), StandardCharsets.UTF_8));
  }

  private int lastStatus;

  /** Sends the request and reads the answer's head; returns the body's length. */
  private long send(String path, String json) throws IOException {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    String head =
        "POST "
            + path
            + " HTTP/1.1\r\nHost: "
            + host
            + "\r\nContent-Type: application/json\r\nContent-Length: "
            + body.length
            + "\r\n\r\n";
    out.write(head.getBytes(StandardCharsets.US_ASCII));
    out.write(body);
    out.flush();
    String status = line();
    lastStatus = Integer.parseInt(status.substring(9, 12));
    long length = -1;
    for (String h = line(); !h.isEmpty(); h = line()) {
      int colon = h.indexOf(':');
      if (colon > 0 && h.substring(0, colon).trim().equalsIgnoreCase("Content-Length")) {
        length = Long.parseLong(h.substring(colon + 1).trim());
      }
    }
    if (length < 0) {
      throw new IOException("an answer without Content-Length: " + status);
    }
    return length;
  }

  private String line() throws IOException {
    StringBuilder sb = new StringBuilder();
    int c;
    while ((c = in.read()) != '\n') {
      if (c < 0) {
        throw new IOException("the server closed the connection");
      }
      if (c != '\r') {
        sb.append((char) c);
      }
    }
    return sb.toString();
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
