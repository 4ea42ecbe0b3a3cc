package io.boxline.server.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.RequestUtils;

/**
 * One client connection: its requests are answered one at a time, in the order they came, as a
 * Kafka broker does (clients rely on it). Who the client is comes from SASL/PLAIN when the server
 * has tokens; until then only ApiVersions and the SASL requests are taken, anything else closes the
 * connection. A frame that does not parse closes the connection too; others are not touched.
 */
final class KafkaConnection extends ChannelInboundHandlerAdapter {
  private static final System.Logger LOG = System.getLogger("io.boxline.server.kafka");

  /** Requests queued on one connection before it stops reading (clients send 5 at most). */
  private static final int MAX_QUEUED = 32;

  private final KafkaListener listener;
  private final Auth auth;

  /** Who sent the requests; null until SASL authenticated them (never null without tokens). */
  volatile Auth.Caller caller;

  /** The client asked for PLAIN in a SaslHandshake: a SaslAuthenticate may follow. */
  volatile boolean handshaken;

  private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
  private final AtomicInteger queued = new AtomicInteger();
  private volatile String peer = "?";

  /**
   * Partitions read ahead of this connection's next fetch (a consumer working through a backlog),
   * by the read that the fetch will make; at most one per partition it fetches.
   */
  final java.util.Map<
          io.boxline.spi.PartitionRead,
          CompletableFuture<java.util.List<io.boxline.spi.StoredEvent>>>
      readAhead = new java.util.concurrent.ConcurrentHashMap<>();

  /** The client id of the connection's last request (Kafka sends it in every header). */
  volatile String clientId;

  KafkaConnection(KafkaListener listener, Auth auth) {
    this.listener = listener;
    this.auth = auth;
    this.caller = auth.disabled() ? auth.anonymous() : null;
  }

  String peer() {
    return peer;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    if (ctx.channel().remoteAddress() instanceof InetSocketAddress a) {
      peer = a.getAddress().getHostAddress() + ":" + a.getPort();
    }
    listener.connections.incrementAndGet();
    ctx.fireChannelActive();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    listener.connections.decrementAndGet();
    ctx.fireChannelInactive();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    ByteBuf frame = (ByteBuf) msg;
    ByteBuffer bytes;
    try {
      bytes = ByteBuffer.allocate(frame.readableBytes());
      frame.readBytes(bytes);
      bytes.flip();
    } finally {
      frame.release();
    }
    if (queued.incrementAndGet() >= MAX_QUEUED) {
      ctx.channel().config().setAutoRead(false);
    }
    synchronized (this) {
      tail =
          tail.thenComposeAsync(v -> answer(ctx, bytes), listener.executor())
              .handle(
                  (v, e) -> {
                    if (e != null) {
                      LOG.log(Level.WARNING, "Kafka connection from " + peer + " failed", e);
                      ctx.close();
                    }
                    if (queued.decrementAndGet() < MAX_QUEUED / 2) {
                      ctx.channel().config().setAutoRead(true);
                    }
                    return null;
                  });
    }
  }

  /** Parses one request, has it answered, and writes the answer (none for acks=0 produces). */
  private CompletableFuture<Void> answer(ChannelHandlerContext ctx, ByteBuffer bytes) {
    if (!ctx.channel().isActive()) {
      return CompletableFuture.completedFuture(null);
    }
    listener.requests.incrementAndGet();
    if (bytes.remaining() < 8) {
      return refuse(ctx, "a request shorter than its header");
    }
    short keyId = bytes.getShort(0);
    short version = bytes.getShort(2);
    int correlationId = bytes.getInt(4);
    if (!ApiKeys.hasId(keyId)) {
      return refuse(ctx, "API key " + keyId + ", which Kafka does not define");
    }
    ApiKeys key = ApiKeys.forId(keyId);
    if (key == ApiKeys.API_VERSIONS && !KafkaApis.supports(key, version)) {
      // Answered in version 0, with the versions this server speaks, so the client can pick one.
      ApiVersionsResponseData data =
          KafkaApis.apiVersions().setErrorCode(Errors.UNSUPPORTED_VERSION.code());
      write(
          ctx,
          new ResponseHeaderData().setCorrelationId(correlationId),
          (short) 0,
          data,
          (short) 0);
      return CompletableFuture.completedFuture(null);
    }
    RequestHeader header;
    try {
      header = RequestHeader.parse(bytes);
    } catch (RuntimeException e) {
      return refuse(
          ctx, "a " + key + " request whose header does not parse (" + e.getMessage() + ")");
    }
    if (caller == null
        && key != ApiKeys.API_VERSIONS
        && key != ApiKeys.SASL_HANDSHAKE
        && key != ApiKeys.SASL_AUTHENTICATE) {
      return refuse(
          ctx,
          "a "
              + key
              + " request before authenticating; the server has tokens: connect with"
              + " security.protocol=SASL_PLAINTEXT (or SASL_SSL), sasl.mechanism=PLAIN, the token's"
              + " name as user name and the token as password");
    }
    clientId = header.clientId();
    CompletableFuture<ApiMessage> answered;
    try {
      answered = listener.apis().handle(this, header, bytes);
    } catch (KafkaApis.Malformed e) {
      return refuse(
          ctx,
          "a " + key + " v" + version + " request that does not parse (" + e.getMessage() + ")");
    }
    return answered.thenAccept(
        data -> {
          if (data != null) {
            write(
                ctx,
                header.toResponseHeader().data(),
                key.responseHeaderVersion(version),
                data,
                version);
          }
        });
  }

  private static void write(
      ChannelHandlerContext ctx,
      ResponseHeaderData header,
      short headerVersion,
      ApiMessage data,
      short version) {
    ByteBuffer out = RequestUtils.serialize(header, headerVersion, data, version);
    ByteBuf size = Unpooled.buffer(4).writeInt(out.remaining());
    ctx.writeAndFlush(Unpooled.wrappedBuffer(size, Unpooled.wrappedBuffer(out)));
  }

  /** Closes the connection over a request that cannot be answered; says why in the log. */
  private CompletableFuture<Void> refuse(ChannelHandlerContext ctx, String what) {
    LOG.log(Level.INFO, "closing the Kafka connection from " + peer + ": it sent " + what);
    ctx.close();
    return CompletableFuture.completedFuture(null);
  }

  /** Authenticates with a SASL/PLAIN token: null when it fits, else why not. */
  String authenticate(String user, String token) {
    try {
      Auth.Caller c = auth.authenticate("Bearer " + token);
      if (!c.name.equals(user)) {
        return "the user name must be the token's name in the server's config";
      }
      caller = c;
      return null;
    } catch (ApiException e) {
      return "the password is not a token this server knows";
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // A frame over the size limit, a TLS failure, a reset: this connection ends, no other.
    LOG.log(Level.INFO, "closing the Kafka connection from " + peer + ": " + cause.getMessage());
    ctx.close();
  }
}
