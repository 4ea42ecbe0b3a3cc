package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.ConsumerBuilder;
import io.boxline.exec.Program;
import io.boxline.exec.ProgramStats;
import io.boxline.server.ServerConfig;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToDoubleFunction;

/**
 * The handler programs a config declares: per subscription, {@code processes} members of its
 * consumer group, each a {@link Consumer} whose handler is a {@link Program} of its own. Their
 * standard error goes to the server's log, their counts to {@code /metrics}, their state to the
 * subscription's view in the API and the console.
 */
final class ProgramHandlers implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("io.boxline.server.handler");

  /** One member: its consumer and its program. */
  record Member(String id, Consumer consumer, Program program) {}

  /** The members of one subscription's handler. */
  record Running(String subscription, ServerConfig.HandlerSpec spec, List<Member> members) {}

  private final Map<String, Running> bySubscription = new ConcurrentHashMap<>();

  /** The longest a member's stop may take: its consumer's, then its program's, bounds. */
  private volatile Duration stopBound = Duration.ZERO;

  /**
   * Starts the members of {@code s}'s handler; ids are {@code <instance>-exec-<n>}. What started is
   * stopped again when a later one fails to start.
   */
  void start(
      Boxline boxline,
      ServerConfig.Subscription s,
      ServerConfig.HandlerSpec spec,
      String instanceId,
      Duration shutdownTimeout,
      MeterRegistry registry) {
    List<Member> members = new ArrayList<>();
    Running running = new Running(s.name(), spec, members);
    bySubscription.put(s.name(), running);
    for (int i = 1; i <= spec.processes(); i++) {
      String id = instanceId + "-exec-" + i;
      String tag = s.name() + "#" + i;
      Program.Builder pb =
          Program.builder(spec.command())
              .name(tag)
              .environment(spec.environment())
              .perEvent(spec.perEvent())
              .replyTimeout(spec.replyTimeout())
              .restartBackoff(spec.restartBackoff(), spec.maxRestartBackoff())
              .stopTimeout(spec.stopTimeout())
              .limits(spec.limits())
              .errorLines(line -> LOG.log(Level.INFO, "handler " + tag + ": " + line));
      spec.directory().ifPresent(pb::directory);
      Program program = pb.build();
      ConsumerBuilder cb =
          boxline
              .consumer(s.name())
              .id(id)
              .concurrency(1) // one program answers one event at a time
              .shutdownTimeout(shutdownTimeout)
              .retryPolicy(s.members().retryPolicy())
              .deadLetterBlocksKey(s.members().deadLetterBlocksKey())
              .hooks(s.members().hooks())
              .handler(program);
      s.members().typePolicies().forEach(cb::retryPolicy);
      Consumer consumer;
      try {
        consumer = cb.start();
      } catch (RuntimeException e) {
        program.close();
        throw e;
      }
      members.add(new Member(id, consumer, program));
    }
    metrics(running, registry);
    Duration bound =
        shutdownTimeout
            .plus(io.boxline.ConsumerBuilder.DEFAULT_HARD_SHUTDOWN_TIMEOUT)
            .plus(spec.stopTimeout())
            .plusSeconds(2);
    if (bound.compareTo(stopBound) > 0) {
      stopBound = bound;
    }
    LOG.log(
        Level.INFO,
        "handler of subscription "
            + s.name()
            + " started: "
            + spec.processes()
            + " member(s) running '"
            + spec.command()
            + "'");
  }

  private static void metrics(Running r, MeterRegistry registry) {
    Gauge.builder(
            "boxline.handler.processes.running",
            r,
            x -> x.members().stream().filter(m -> state(m) == ProgramStats.State.RUNNING).count())
        .tag("subscription", r.subscription())
        .description("handler processes running now (a per-event handler's while one runs)")
        .register(registry);
    Gauge.builder(
            "boxline.handler.processes.backing.off",
            r,
            x ->
                x.members().stream()
                    .filter(m -> state(m) == ProgramStats.State.BACKING_OFF)
                    .count())
        .tag("subscription", r.subscription())
        .description("handler processes waiting out their restart backoff after a crash")
        .register(registry);
    counter(
        registry,
        r,
        "boxline.handler.starts",
        "handler processes started",
        null,
        ProgramStats::starts);
    counter(
        registry,
        r,
        "boxline.handler.crashes",
        "handler processes that ended unasked: exited, hung past the reply timeout or answered"
            + " outside the protocol",
        null,
        ProgramStats::crashes);
    String answers = "events the handler program answered, by answer";
    counter(registry, r, "boxline.handler.answers", answers, "ok", ProgramStats::ok);
    counter(registry, r, "boxline.handler.answers", answers, "retry", ProgramStats::retried);
    counter(registry, r, "boxline.handler.answers", answers, "dead", ProgramStats::dead);
    counter(
        registry,
        r,
        "boxline.handler.invalid.answers",
        "answers that were not ok, retry or dead (each also counts as a retry)",
        null,
        ProgramStats::invalid);
  }

  private static void counter(
      MeterRegistry registry,
      Running r,
      String name,
      String description,
      String answer,
      java.util.function.ToLongFunction<ProgramStats> count) {
    ToDoubleFunction<Running> sum =
        x -> x.members().stream().mapToLong(m -> count.applyAsLong(m.program().stats())).sum();
    FunctionCounter.Builder<Running> b =
        FunctionCounter.builder(name, r, sum)
            .tag("subscription", r.subscription())
            .description(description);
    if (answer != null) {
      b.tag("answer", answer);
    }
    b.register(registry);
  }

  private static ProgramStats.State state(Member m) {
    return m.program().stats().state();
  }

  /** The handler of {@code subscription} on this server, if it runs one. */
  Optional<ApiBodies.Handler> view(String subscription) {
    Running r = bySubscription.get(subscription);
    if (r == null) {
      return Optional.empty();
    }
    List<ApiBodies.HandlerProcess> processes = new ArrayList<>();
    for (Member m : r.members()) {
      ProgramStats st = m.program().stats();
      processes.add(
          new ApiBodies.HandlerProcess(
              m.id(),
              st.state().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'),
              st.pid() == 0 ? null : st.pid(),
              m.consumer().assignedPartitions().size(),
              st.starts(),
              st.crashes(),
              st.ok(),
              st.retried(),
              st.dead(),
              st.invalid(),
              st.lastProblem(),
              st.lastProblemAt() == null ? null : st.lastProblemAt().toString(),
              st.restartAt() == null ? null : st.restartAt().toString()));
    }
    return Optional.of(new ApiBodies.Handler(r.spec().command(), r.spec().perEvent(), processes));
  }

  int size() {
    return bySubscription.size();
  }

  /**
   * Stops every member at once, each bounded: its consumer finishes the event in progress (up to
   * the shutdown timeout, then interrupts it), then its program ends (up to its stop timeout, then
   * it is terminated).
   */
  @Override
  public void close() {
    List<Thread> stopping = new ArrayList<>();
    for (Running r : bySubscription.values()) {
      for (Member m : r.members()) {
        Thread t =
            new Thread(
                () -> {
                  try {
                    m.consumer().close();
                  } finally {
                    m.program().close();
                  }
                },
                "boxline-handler-stop-" + m.id());
        t.setDaemon(true);
        t.start();
        stopping.add(t);
      }
    }
    long deadline = System.nanoTime() + stopBound.toNanos();
    for (Thread t : stopping) {
      try {
        t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
    bySubscription.clear();
  }
}
