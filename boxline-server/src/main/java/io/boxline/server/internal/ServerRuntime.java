package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.SubscriptionSpec;
import io.boxline.jdbc.JdbcStore;
import io.boxline.micrometer.BoxlineMetrics;
import io.boxline.relay.Relay;
import io.boxline.server.ServerConfig;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A running server: the database, Boxline with its metrics, the declared catalog, the relays and
 * the HTTP listener, started in that order and stopped in the reverse one.
 */
public final class ServerRuntime implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("io.boxline.server");

  private final ServerConfig config;
  private Database database;
  private PrometheusMeterRegistry registry;
  private ConsumeApi consume;
  private ProduceApi produce;
  private GroupCommit commits;
  private io.micrometer.core.instrument.binder.jvm.JvmGcMetrics jvmGc;
  private WebSocketApi websockets;
  private Boxline boxline;
  private final List<Relay> relays = new ArrayList<>();
  private final ProgramHandlers handlers = new ProgramHandlers();
  private Server jetty;
  private KafkaListener kafka;
  private io.boxline.spi.Store store;
  private ServerConnector connector;
  private ThreadPoolExecutor executor;
  private Router router;
  private Auth auth;
  private volatile boolean running;
  private boolean closed;

  private ServerRuntime(ServerConfig config) {
    this.config = config;
  }

  /** Starts everything; on a failure what was started is stopped again and the error thrown. */
  public static ServerRuntime start(ServerConfig config) {
    ServerRuntime r = new ServerRuntime(config);
    try {
      r.startAll();
      return r;
    } catch (RuntimeException | Error e) {
      r.close();
      throw e;
    } catch (Exception e) {
      r.close();
      throw new io.boxline.BoxlineException("the server could not start: " + e.getMessage(), e);
    }
  }

  private void startAll() throws Exception {
    database = new Database(config.database());
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    // The process's own health beside Boxline's: heap, threads, garbage collection.
    new io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics().bindTo(registry);
    new io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics().bindTo(registry);
    jvmGc = new io.micrometer.core.instrument.binder.jvm.JvmGcMetrics();
    jvmGc.bindTo(registry);
    BoxlineMetrics metrics = BoxlineMetrics.builder(registry).partitionGauges(true).build();
    store =
        JdbcStore.builder(database.dataSource())
            .schema(config.database().schema())
            .readReplicas(database.replicas())
            .replicaWait(config.database().replicaWait())
            .build();
    Boxline.Builder builder =
        Boxline.builder().store(store).observer(metrics).migrate(config.database().migrate());
    for (ServerConfig.Subscription s : config.subscriptions()) {
      builder.memberPolicy(s.name(), s.members());
    }
    boxline = builder.build().start();
    applyCatalog();
    running = true;
    for (ServerConfig.RelaySpec spec : config.relays()) {
      relays.add(
          Relays.start(boxline, spec, boxline.instanceId(), config.http().shutdownTimeout()));
      LOG.log(
          Level.INFO,
          "relay "
              + spec.name()
              + " started: "
              + spec.kind()
              + " from subscription "
              + spec.subscription());
    }
    for (ServerConfig.Subscription s : config.subscriptions()) {
      if (s.handler().isPresent()) {
        handlers.start(
            boxline,
            s,
            s.handler().get(),
            boxline.instanceId(),
            config.http().shutdownTimeout(),
            registry);
      }
    }
    startHttp();
    if (config.kafka().isPresent()) {
      startKafka(config.kafka().get());
    }
    LOG.log(
        Level.INFO,
        String.format(
            "Boxline server listening on %s (database: %s; %d topics, %d subscriptions, %d relays, %d handlers declared; tokens: %s)",
            baseUrl(),
            database.description,
            config.topics().size(),
            config.subscriptions().size(),
            relays.size(),
            handlers.size(),
            config.authDisabled() && config.tokens().isEmpty()
                ? "none, auth disabled"
                : config.tokens().stream()
                    .map(
                        t ->
                            t.name()
                                + " ("
                                + t.role().name().toLowerCase(java.util.Locale.ROOT)
                                + " of "
                                + String.join(", ", t.namespaces())
                                + ")")
                    .collect(java.util.stream.Collectors.joining(", "))));
  }

  /** Creates what the config declares and is missing; refuses what exists differently. */
  private void applyCatalog() {
    var admin = boxline.admin();
    for (var ns : config.namespaces()) {
      admin.createNamespace(ns);
    }
    for (ServerConfig.Topic t : config.topics()) {
      admin.createNamespace(t.name().namespace());
      admin.createTopic(t.name(), t.partitions(), t.sequencing());
      t.retention().ifPresent(r -> admin.setRetention(t.name(), r));
    }
    for (ServerConfig.Subscription s : config.subscriptions()) {
      admin.createSubscription(
          SubscriptionSpec.of(s.name(), s.topics().toArray(io.boxline.TopicName[]::new))
              .startAt(s.start()));
      s.groupPolicy().ifPresent(p -> admin.setGroupPolicy(s.name(), p));
    }
    config.defaultGroupPolicy().ifPresent(admin::setDefaultGroupPolicy);
  }

  private void startHttp() throws Exception {
    ServerConfig.Http h = config.http();
    AtomicInteger n = new AtomicInteger();
    // Handlers that may block (database calls, long polls, streams) run here; when all threads are
    // busy and the queue is full, a request gets 503 with Retry-After instead of waiting unseen.
    executor =
        new ThreadPoolExecutor(
            h.threads(),
            h.threads(),
            60,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(h.threads() * 8),
            r -> {
              Thread t = new Thread(r, "boxline-http-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            },
            new ThreadPoolExecutor.AbortPolicy());
    // Jetty's own threads only parse requests and write answers; they never wait on a client.
    QueuedThreadPool io = new QueuedThreadPool(16, 4);
    io.setName("boxline-jetty");
    io.setDaemon(true);
    jetty = new Server(io);
    HttpConfiguration hc = new HttpConfiguration();
    hc.setSendServerVersion(false);
    hc.setSendXPoweredBy(false);
    hc.setRequestHeaderSize(16 * 1024);
    // Topic and subscription names travel URL-encoded in one path segment (acme%2Forders).
    hc.setUriCompliance(
        UriCompliance.DEFAULT.with("boxline", UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR));
    HttpConnectionFactory http11 = new HttpConnectionFactory(hc);
    ServerConnector connector;
    if (h.keystore().isPresent()) {
      SslContextFactory.Server tls = new SslContextFactory.Server();
      tls.setKeyStorePath(h.keystore().get().toString());
      tls.setKeyStorePassword(h.keystorePassword());
      tls.setKeyStoreType("PKCS12");
      hc.addCustomizer(new SecureRequestCustomizer(false));
      connector =
          new ServerConnector(
              jetty, 1, 1, new SslConnectionFactory(tls, http11.getProtocol()), http11);
    } else {
      connector = new ServerConnector(jetty, 1, 1, HttpStack.cleartext(http11, h));
    }
    connector.setHost(h.host());
    connector.setPort(h.port());
    connector.setAcceptQueueSize(256);
    // A connection that sends nothing (an unfinished request, an idle keep-alive) is closed after
    // this; it holds no thread meanwhile.
    connector.setIdleTimeout(h.idleTimeout().toMillis());
    jetty.addConnector(connector);
    jetty.addBean(new NetworkConnectionLimit(h.maxConnections(), connector));
    jetty.setErrorHandler(new JsonErrors());
    auth = new Auth(config);
    router = new Router(auth, h.maxBodyBytes(), h.bodyTimeout(), executor);
    KnownSubscriptions known = new KnownSubscriptions(boxline.admin());
    new AdminApi(boxline, known, Clock.systemUTC(), handlers).register(router);
    new OverviewApi(boxline.admin(), Clock.systemUTC()).register(router);
    if (h.console()) {
      new ConsoleAssets().register(router);
    }
    // Up to four transactions at once, half the pool at most (the other requests need the rest):
    // with
    // two, four concurrent producers of batches got 0.85x of four Java threads, with four 1.0x
    // (S1).
    commits =
        new GroupCommit(
            boxline, Math.max(1, Math.min(4, config.database().poolSize() / 2)), h.threads() * 8);
    gauge(
        "boxline.http.publish.queued",
        commits,
        GroupCommit::queued,
        "publish requests waiting for a shared transaction");
    counter(
        "boxline.http.publish.transactions",
        commits,
        GroupCommit::transactions,
        "transactions that committed HTTP publish requests");
    counter(
        "boxline.http.publish.requests",
        commits,
        GroupCommit::requests,
        "HTTP publish requests committed in those transactions");
    produce = new ProduceApi(boxline, commits, h.maxStreams(), () -> running);
    produce.register(router);
    consume = new ConsumeApi(boxline, known, () -> running);
    consume.register(router);
    counter(
        "boxline.http.member.fetches",
        consume,
        ConsumeApi::fetches,
        "fetches made by HTTP members' long polls, each a check-in or a read");
    counter(
        "boxline.http.members.renewed",
        consume,
        ConsumeApi::renewed,
        "check-ins of waiting members made by the server's renewals");
    websockets =
        new WebSocketApi(
            jetty,
            boxline,
            auth,
            produce,
            executor,
            () -> running,
            h.maxBodyBytes(),
            h.idleTimeout());
    websockets.register(router);
    gauge(
        "boxline.http.fetches.waiting",
        consume,
        ConsumeApi::waiting,
        "long-poll fetches waiting for events, holding no thread");
    gauge(
        "boxline.http.websockets.open",
        websockets,
        WebSocketApi::open,
        "open WebSocket tails and group members");
    gauge(
        "boxline.http.streams.open",
        produce,
        ProduceApi::openStreams,
        "open tails, server-sent events and WebSocket, of http.maxStreams");
    registerOps(router);
    jetty.setHandler(HttpStack.around(router, h));
    jetty.setStopTimeout(0);
    jetty.start();
    this.connector = connector;
  }

  private void startKafka(ServerConfig.Kafka k) throws Exception {
    io.netty.handler.ssl.SslContext tls = null;
    if (k.tls()) {
      java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
      char[] password = config.http().keystorePassword().toCharArray();
      try (InputStream in = java.nio.file.Files.newInputStream(config.http().keystore().get())) {
        ks.load(in, password);
      }
      javax.net.ssl.KeyManagerFactory kmf =
          javax.net.ssl.KeyManagerFactory.getInstance(
              javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, password);
      tls = io.netty.handler.ssl.SslContextBuilder.forServer(kmf).build();
    }
    kafka = new KafkaListener(k, boxline, store, auth, commits, tls);
    gauge(
        "boxline.kafka.connections",
        kafka,
        l -> l.connections.get(),
        "open connections of Kafka clients");
    counter(
        "boxline.kafka.requests",
        kafka,
        l -> l.requests.get(),
        "Kafka protocol requests answered or refused");
    gauge(
        "boxline.kafka.group.members",
        kafka,
        l -> l.apis().groupMembers(),
        "members of Kafka consumer groups coordinated by this instance");
    gauge(
        "boxline.kafka.nodes",
        kafka,
        l -> l.cluster().nodes().size(),
        "server instances serving the Kafka protocol on this database, this one included");
    counter(
        "boxline.kafka.cluster.check.ins",
        kafka,
        l -> l.cluster().checkIns.get(),
        "check-ins of this instance's Kafka listener in the database (loop boxline-kafka-cluster)");
    counter(
        "boxline.kafka.cluster.check.in.failures",
        kafka,
        l -> l.cluster().checkInFailures.get(),
        "failed check-ins of this instance's Kafka listener; it coordinates no group meanwhile");
  }

  /** The Kafka listener's port, or -1 when it is off. */
  public int kafkaPort() {
    return kafka == null ? -1 : kafka.port();
  }

  private <T> void counter(
      String name, T of, java.util.function.ToDoubleFunction<T> value, String what) {
    FunctionCounter.builder(name, of, value).description(what).register(registry);
  }

  private <T> void gauge(
      String name, T of, java.util.function.ToDoubleFunction<T> value, String what) {
    Gauge.builder(name, of, value).description(what).register(registry);
  }

  private void registerOps(Router r) {
    r.addInline("GET", "/health/live", c -> c.json(200, new ApiBodies.Live("UP")));
    r.addOpen(
        "GET",
        "/health/ready",
        c -> {
          String problem = readiness();
          c.json(
              problem == null ? 200 : 503,
              new ApiBodies.Ready(problem == null ? "UP" : "DOWN", problem));
        });
    r.addOpen(
        "GET",
        "/metrics",
        c -> {
          if (config.http().protectMetrics()) {
            // Metrics name every tenant's topics and subscriptions: a token of every namespace
            // only.
            auth.authenticate(c.header("Authorization")).requireCluster(Auth.Action.READ);
          }
          c.send(
              200,
              "text/plain; version=0.0.4; charset=utf-8",
              registry.scrape().getBytes(StandardCharsets.UTF_8));
        });
    r.addOpen("GET", "/openapi.json", c -> c.send(200, "application/json", openApi()));
  }

  static byte[] openApi() throws IOException {
    try (InputStream in =
        ServerRuntime.class.getResourceAsStream("/io/boxline/server/openapi.json")) {
      if (in == null) {
        throw new IOException("openapi.json is missing from the jar");
      }
      return in.readAllBytes();
    }
  }

  /** Null when ready, else why not: the database must answer. */
  private String readiness() {
    if (!running) {
      return "shutting down";
    }
    try (var c = database.dataSource().getConnection()) {
      if (!c.isValid(2)) {
        return "the database does not answer";
      }
      return null;
    } catch (Exception e) {
      return "the database does not answer: " + e.getMessage();
    }
  }

  public int port() {
    return connector.getLocalPort();
  }

  public String baseUrl() {
    return (config.http().keystore().isPresent() ? "https" : "http")
        + "://"
        + config.http().host()
        + ":"
        + port();
  }

  public Boxline boxline() {
    return boxline;
  }

  /** The routes, as "METHOD /pattern", for the OpenAPI check. */
  public List<String> routes() {
    List<String> out = new ArrayList<>();
    router.routes().forEach(r -> out.add(r.method() + " " + r.pattern()));
    return out;
  }

  /**
   * Stops in order, each step bounded: new requests get 503, tail streams end, in-flight requests
   * finish (up to the shutdown timeout), handler programs finish their events and end, relays
   * finish their batches, Boxline stops its consumers and loops, the pool closes. Safe to call
   * twice.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    long t0 = System.nanoTime();
    Duration timeout = config.http().shutdownTimeout();
    long deadline = System.nanoTime() + timeout.toNanos();
    running = false;
    if (kafka != null) {
      // Kafka clients see their connections close and go to another instance or retry.
      kafka.close(Duration.ofSeconds(Math.min(5, timeout.toSeconds())));
    }
    if (consume != null) {
      consume.close(Duration.ofSeconds(1)); // no more renewals
      consume.wakeAll(); // waiting long polls answer now with what they have
    }
    if (produce != null) {
      produce.wakeAll(); // tail streams end now
    }
    if (websockets != null) {
      websockets.closeAll(timeout); // close frames 1001; socket members leave their groups
    }
    if (router != null) {
      // Requests still arriving on open connections get 503; tail streams see running = false.
      router.closing();
      while (router.active() > 0 && System.nanoTime() < deadline) {
        try {
          Thread.sleep(10);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      if (router.active() > 0) {
        LOG.log(
            Level.WARNING,
            router.active()
                + " requests still running after "
                + timeout
                + "; closing their connections");
      }
    }
    if (commits != null) {
      commits.close(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }
    if (jetty != null) {
      try {
        jetty.stop();
      } catch (Exception e) {
        LOG.log(Level.WARNING, "the HTTP listener did not stop cleanly", e);
      }
    }
    if (executor != null) {
      executor.shutdown();
      try {
        executor.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      executor.shutdownNow();
    }
    // Each of the rest runs even when one before it fails; the first failure is thrown at the end.
    List<RuntimeException> failures = new ArrayList<>();
    step("the handler programs", handlers::close, failures);
    for (Relay r : relays) {
      step("relay for " + r.subscription(), r::close, failures);
    }
    if (boxline != null) {
      step("Boxline", boxline::close, failures);
    }
    if (jvmGc != null) {
      step("the GC metrics", jvmGc::close, failures);
    }
    if (registry != null) {
      step("the metrics registry", registry::close, failures);
    }
    if (database != null) {
      step("the connection pool", database::close, failures);
    }
    LOG.log(
        Level.INFO,
        String.format("Boxline server stopped in %.1f s", (System.nanoTime() - t0) / 1e9));
    if (!failures.isEmpty()) {
      RuntimeException first = failures.get(0);
      failures.subList(1, failures.size()).forEach(first::addSuppressed);
      throw first;
    }
  }

  private static void step(String what, Runnable close, List<RuntimeException> failures) {
    try {
      close.run();
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, what + " did not close cleanly; closing the rest", e);
      failures.add(e);
    }
  }
}
