package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.server.ServerConfig;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.ssl.SslContext;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Kafka protocol listener: Netty reads length-prefixed frames, each {@link KafkaConnection}
 * answers its requests one at a time and in order (as a Kafka broker does), and the work that
 * touches the database runs on the {@code boxline-kafka-<n>} threads, never on Netty's.
 */
final class KafkaListener implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("io.boxline.server.kafka");

  private final EventLoopGroup boss;
  private final EventLoopGroup workers;
  private final ExecutorService executor;
  private final ScheduledExecutorService timers;
  private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private final Channel server;
  private final KafkaApis apis;
  private final KafkaCluster cluster;
  private final int port;
  final AtomicLong requests = new AtomicLong();
  final AtomicInteger connections = new AtomicInteger();
  private boolean closed;

  KafkaListener(
      ServerConfig.Kafka config,
      Boxline boxline,
      io.boxline.spi.Store store,
      Auth auth,
      GroupCommit commits,
      SslContext tls)
      throws InterruptedException {
    AtomicInteger n = new AtomicInteger();
    executor =
        Executors.newFixedThreadPool(
            16,
            r -> {
              Thread t = new Thread(r, "boxline-kafka-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    timers =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "boxline-kafka-groups");
              t.setDaemon(true);
              return t;
            });
    boss =
        new MultiThreadIoEventLoopGroup(
            1, new DefaultThreadFactory("boxline-kafka-accept", true), NioIoHandler.newFactory());
    workers =
        new MultiThreadIoEventLoopGroup(
            2, new DefaultThreadFactory("boxline-kafka-io", true), NioIoHandler.newFactory());
    KafkaCatalog catalog = new KafkaCatalog(boxline, new KnownSubscriptions(boxline.admin()));
    try {
      ServerBootstrap b =
          new ServerBootstrap()
              .group(boss, workers)
              .channel(NioServerSocketChannel.class)
              .option(ChannelOption.SO_BACKLOG, 256)
              .childOption(ChannelOption.TCP_NODELAY, true)
              .childHandler(
                  new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                      channels.add(ch);
                      if (tls != null) {
                        ch.pipeline().addLast(tls.newHandler(ch.alloc()));
                      }
                      // A frame is a 4-byte size and that many bytes; a larger one than allowed
                      // closes the connection (Kafka's socket.request.max.bytes).
                      ch.pipeline()
                          .addLast(
                              new LengthFieldBasedFrameDecoder(
                                  config.maxRequestBytes() + 4, 0, 4, 0, 4, true));
                      ch.pipeline().addLast(new KafkaConnection(KafkaListener.this, auth));
                    }
                  });
      server = b.bind(config.host(), config.port()).sync().channel();
    } catch (InterruptedException | RuntimeException e) {
      shutdownGroups();
      throw e;
    }
    this.port = ((InetSocketAddress) server.localAddress()).getPort();
    try {
      this.cluster =
          new KafkaCluster(
                  store.coordination(),
                  config.advertisedHost(),
                  port,
                  config.nodeTimeout(),
                  System::nanoTime)
              .start();
    } catch (RuntimeException e) {
      server.close().awaitUninterruptibly(5_000);
      shutdownGroups();
      throw e;
    }
    KafkaGroups groups =
        new KafkaGroups(boxline, store, catalog, cluster, timers, config.sessionTimeoutMax());
    this.apis = new KafkaApis(boxline, store, catalog, groups, cluster, commits, executor);
    LOG.log(
        Level.INFO,
        "Kafka protocol listening on "
            + config.host()
            + ":"
            + port
            + (tls != null ? " (TLS)" : "")
            + ", advertised as "
            + config.advertisedHost()
            + ":"
            + port
            + ", node "
            + cluster.nodeId()
            + " of "
            + cluster.nodes().size());
  }

  KafkaCluster cluster() {
    return cluster;
  }

  int port() {
    return port;
  }

  KafkaApis apis() {
    return apis;
  }

  ExecutorService executor() {
    return executor;
  }

  /** Stops accepting, closes every connection and waits for the request threads, up to timeout. */
  synchronized void close(Duration timeout) {
    if (closed) {
      return;
    }
    closed = true;
    long deadline = System.nanoTime() + timeout.toNanos();
    server.close().awaitUninterruptibly(timeout.toMillis());
    apis.close();
    channels.close().awaitUninterruptibly(Math.max(0, (deadline - System.nanoTime()) / 1_000_000));
    executor.shutdown();
    timers.shutdownNow();
    try {
      executor.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    executor.shutdownNow();
    cluster.close();
    shutdownGroups();
  }

  private void shutdownGroups() {
    boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    workers.shutdownGracefully(0, 1, TimeUnit.SECONDS);
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(5));
  }
}
