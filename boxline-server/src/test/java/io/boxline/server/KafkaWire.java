package io.boxline.server;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;

/**
 * A Kafka connection at the level of single requests, for tests that need exact control (a commit
 * with a stale generation, generated attacks, malformed frames): requests and responses are
 * kafka-clients' own classes, the socket is a plain one.
 */
final class KafkaWire implements AutoCloseable {
  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;
  private int correlation;

  private KafkaWire(int port) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(20_000);
    in = new DataInputStream(socket.getInputStream());
    out = socket.getOutputStream();
  }

  /** A connection authenticated with SASL/PLAIN as this token. */
  static KafkaWire connect(int port, String user, String token) throws IOException {
    KafkaWire w = new KafkaWire(port);
    SaslHandshakeResponse hs =
        w.send(
            new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData().setMechanism("PLAIN")),
            (short) 1);
    if (hs.error() != Errors.NONE) {
      throw new IOException("handshake: " + hs.error());
    }
    SaslAuthenticateResponse auth =
        w.send(
            new SaslAuthenticateRequest.Builder(
                new SaslAuthenticateRequestData()
                    .setAuthBytes(("\0" + user + "\0" + token).getBytes(StandardCharsets.UTF_8))),
            (short) 2);
    if (auth.error() != Errors.NONE) {
      throw new IOException("authentication: " + auth.error() + " " + auth.errorMessage());
    }
    return w;
  }

  /** A connection that has not authenticated. */
  static KafkaWire raw(int port) throws IOException {
    return new KafkaWire(port);
  }

  @SuppressWarnings("unchecked")
  <R extends AbstractResponse> R send(AbstractRequest.Builder<?> builder, short version)
      throws IOException {
    AbstractRequest request = builder.build(version);
    RequestHeader header =
        new RequestHeader(builder.apiKey(), version, "kafka-wire-test", ++correlation);
    ByteBuffer bytes = request.serializeWithHeader(header);
    writeFrame(bytes.array(), bytes.arrayOffset() + bytes.position(), bytes.remaining());
    int size = in.readInt();
    byte[] answer = new byte[size];
    in.readFully(answer);
    return (R) AbstractResponse.parseResponse(ByteBuffer.wrap(answer), header);
  }

  /** Writes a frame: a 4-byte size, then the bytes. */
  void writeFrame(byte[] bytes, int offset, int length) throws IOException {
    ByteBuffer size = ByteBuffer.allocate(4).putInt(length);
    out.write(size.array());
    out.write(bytes, offset, length);
    out.flush();
  }

  /** Writes bytes as they are (no size prefix). */
  void writeRaw(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
  }

  /** True when the server closes the connection within the socket timeout without answering. */
  boolean closedByServer() throws IOException {
    try {
      while (true) {
        if (in.read() < 0) {
          return true;
        }
      }
    } catch (EOFException e) {
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
