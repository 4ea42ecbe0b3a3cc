package io.boxline.cli;

import io.boxline.Consumer;
import io.boxline.RemoteConsumers;
import io.boxline.RetryPolicy;
import io.boxline.client.RemoteMembers;
import io.boxline.exec.Answer;
import io.boxline.exec.Program;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Joins a subscription's consumer group and hands each event to a program, in order per key, with
 * the group's leases, fencing, retries and dead letters. Two ways to talk to the program:
 *
 * <ul>
 *   <li>one long-running process (default): each event goes to its standard input as one JSON line;
 *       it answers each with one line on its standard output: {@code ok}, {@code retry [reason]} (a
 *       failed attempt: retried under the retry policy, dead-lettered after the last) or {@code
 *       dead [reason]} (dead-lettered now). A process that exits, does not answer within {@code
 *       --reply-timeout} or answers anything else fails the attempt and is started again, after a
 *       backoff of 1 s doubling with each crash in a row up to 1 min ({@link Program});
 *   <li>{@code --per-event}: a new process per event, the event as JSON on its standard input; exit
 *       0 is done, 65 (EX_DATAERR) dead-letters it, anything else fails the attempt.
 * </ul>
 *
 * <p>Ctrl-C (SIGINT) or SIGTERM finishes the call in progress, commits, leaves the group and exits.
 *
 * <p>Over a server ({@code --server}) the member goes through the server's fetch and settle routes
 * instead of a {@link Consumer}: same group, leases, per-key order, retries and dead letters, with
 * the limits of an HTTP member (its check-in is each fetch; no in-place attempts).
 */
@Command(
    name = "consume",
    description =
        "Join SUBSCRIPTION's consumer group and feed its events to a program (any language)"
            + " as JSON lines; the program's reply or exit status decides done, retry or dead letter.",
    footer = {
      "%nExamples:",
      "  boxline consume billing --exec 'python3 handle.py'",
      "  boxline consume billing --exec './notify.sh' --per-event --max-attempts 5",
      "%nA program answering per line, in Python:",
      "  import sys, json",
      "  for line in sys.stdin:",
      "      event = json.loads(line)",
      "      print('ok', flush=True)        # or 'retry reason' / 'dead reason'"
    })
final class ConsumeCommand implements java.util.concurrent.Callable<Integer> {
  @Mixin Connection connection;

  @Parameters(paramLabel = "SUBSCRIPTION")
  String subscription;

  @Option(names = "--exec", required = true, paramLabel = "COMMAND", description = "run by sh -c")
  String command;

  @Option(names = "--per-event", description = "start the program once per event")
  boolean perEvent;

  @Option(names = "--id", description = "member id in the group (default: host-pid)")
  String id;

  @Option(names = "--weight", description = "share of partitions relative to others (default 1)")
  double weight = 1;

  @Option(
      names = "--reply-timeout",
      paramLabel = "DURATION",
      description = "how long the program may take per event, ISO-8601 (default PT60S)")
  Duration replyTimeout = Duration.ofSeconds(60);

  @Option(names = "--max-attempts", description = "attempts before a dead letter (default 10)")
  int maxAttempts = 10;

  @Option(
      names = "--backoff",
      paramLabel = "DURATION",
      description = "first retry delay, doubling up to 10 min (default PT1S)")
  Duration backoff = Duration.ofSeconds(1);

  @Option(
      names = "--sequencer",
      description = "also take part in sequencing (when no application runs the sequencer)")
  boolean sequencer;

  @Option(names = "--quiet", description = "no progress lines on standard error")
  boolean quiet;

  private final AtomicLong done = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final AtomicLong dead = new AtomicLong();

  @Override
  public Integer call() throws Exception {
    if (connection.overServer()) {
      return overServer();
    }
    PrintStream err = System.err;
    Program program = program();
    Connection.Session session = connection.open(b -> b.sequencer(sequencer));
    Consumer consumer;
    try {
      consumer =
          session
              .boxline("'boxline consume'")
              .consumer(subscription)
              .id(memberId())
              .weight(weight)
              .concurrency(1)
              .shutdownTimeout(replyTimeout.plusSeconds(5))
              .retryPolicy(
                  RetryPolicy.exponential(backoff, Duration.ofMinutes(10))
                      .inPlaceAttempts(1)
                      .maxAttempts(maxAttempts))
              .handler(program)
              .start();
    } catch (RuntimeException e) {
      session.close();
      program.close();
      throw e;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  consumer.close(); // finishes the call in progress, commits, leaves the group
                  session.close();
                  program.close();
                  if (!quiet) {
                    io.boxline.exec.ProgramStats st = program.stats();
                    err.println(summary(st.ok(), st.retried(), st.dead()));
                  }
                  stopped.countDown();
                },
                "boxline-cli-shutdown"));
    if (!quiet) {
      err.println(
          "consuming "
              + subscription
              + " as "
              + consumer.id()
              + " with '"
              + command
              + "'; Ctrl-C to stop");
    }
    stopped.await(); // until a signal runs the hook
    return ExitCodes.OK;
  }

  private String memberId() {
    return id != null ? id : "cli-" + hostName() + "-" + ProcessHandle.current().pid();
  }

  /** This host's name, or {@code host} when the lookup fails (as the engine's instance ids). */
  private static String hostName() {
    try {
      return java.net.InetAddress.getLocalHost().getHostName();
    } catch (java.io.IOException e) {
      return "host";
    }
  }

  /** Events per fetch over a server; each fetch's events are handled within its check-in time. */
  static final int FETCH_MAX = 50;

  /** How long a fetch waits for events over a server (a stop waits for it at most this long). */
  static final int FETCH_WAIT_MILLIS = 2000;

  /**
   * Over a server: a group member through its fetch and settle routes. Each fetch checks the member
   * in; its events are handled one at a time, in order, for at most the check-in time the server
   * gives, then settled together (the rest come again at the next fetch). A retried event holds
   * back the later events of its key in that fetch; the server parks them behind it. Attempts are
   * counted by the server; the last one, or a "dead" answer, settles the event as dead.
   */
  private Integer overServer() throws InterruptedException {
    PrintStream err = System.err;
    Connection.Session session = connection.open();
    RemoteMembers members = session.server().members();
    String member = memberId();
    Program program = program();
    AtomicBoolean stopping = new AtomicBoolean();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  stopping.set(true); // the loop finishes the event in progress, settles, leaves
                  try {
                    stopped.await(
                        replyTimeout.toMillis() + FETCH_WAIT_MILLIS + 15_000,
                        TimeUnit.MILLISECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                },
                "boxline-cli-shutdown"));
    boolean joined = false;
    try {
      while (!stopping.get()) {
        RemoteConsumers.Batch batch;
        try {
          batch =
              members.fetch(
                  subscription, member, weight, FETCH_MAX, Duration.ofMillis(FETCH_WAIT_MILLIS));
        } catch (RuntimeException f) {
          int status = Failures.serverStatus(f);
          if (status < 0 || (status != 0 && status < 500)) {
            throw f; // the token, the subscription, a full group: nothing to wait for
          }
          warn(err, Failures.fromServer(f).getMessage() + "; fetching again in 1 s");
          Thread.sleep(1000); // the server restarts or another one takes over
          continue;
        }
        if (!joined) {
          joined = true; // the first fetch checked the token, the subscription and the group
          if (!quiet) {
            err.println(
                "consuming "
                    + subscription
                    + " as "
                    + member
                    + " through "
                    + session.server().url()
                    + " with '"
                    + command
                    + "'; Ctrl-C to stop");
          }
        }
        long until = System.nanoTime() + batch.checkInWithin().toNanos();
        List<RemoteConsumers.Settlement> settle = new ArrayList<>();
        Set<String> held = new HashSet<>();
        int ok = 0;
        int retried = 0; // failed attempts, the last ones included
        int deadLettered = 0;
        for (RemoteConsumers.Delivery d : batch.deliveries()) {
          if (stopping.get() || System.nanoTime() > until) {
            break; // not handled: the next fetch (here or at the partition's next owner) has it
          }
          String key = d.event().key();
          if (key != null && held.contains(key)) {
            continue; // behind its key's retry: the server parks it
          }
          Answer a = program.ask(d.event());
          if (a.kind() == Answer.Kind.OK) {
            settle.add(RemoteConsumers.Settlement.done(d.ackId()));
            ok++;
          } else if (a.kind() == Answer.Kind.DEAD || d.attempt() >= maxAttempts) {
            String why =
                a.kind() == Answer.Kind.DEAD
                    ? a.reason()
                    : "after " + d.attempt() + " attempt(s): " + a.reason();
            settle.add(
                new RemoteConsumers.Settlement(d.ackId(), RemoteConsumers.Outcome.DEAD, null, why));
            deadLettered++;
            retried += a.kind() == Answer.Kind.DEAD ? 0 : 1;
          } else {
            settle.add(
                new RemoteConsumers.Settlement(
                    d.ackId(), RemoteConsumers.Outcome.RETRY, backoff(d.attempt()), a.reason()));
            retried++;
            if (key != null) {
              held.add(key);
            }
          }
        }
        if (settle.isEmpty()) {
          continue;
        }
        try {
          members.settle(subscription, member, settle);
        } catch (RuntimeException f) {
          int status = Failures.serverStatus(f);
          if (status < 0 || (status != 409 && status != 0 && status < 500)) {
            throw f;
          }
          // The partition moved on (or the answer was lost): its events come again.
          warn(err, Failures.fromServer(f).getMessage() + "; fetching again");
          continue;
        }
        done.addAndGet(ok);
        failed.addAndGet(retried);
        dead.addAndGet(deadLettered);
      }
    } finally {
      if (joined) {
        try {
          members.leave(subscription, member);
        } catch (RuntimeException e) {
          // it counts as gone once its deadline has passed
        }
      }
      program.close();
      session.close();
      if (joined && !quiet) {
        err.println(summary(done.get(), failed.get(), dead.get()));
      }
      stopped.countDown();
    }
    return ExitCodes.OK;
  }

  private void warn(PrintStream err, String message) {
    if (!quiet) {
      err.println("boxline: warning: " + Failures.oneLine(message));
    }
  }

  /** The delay before attempt {@code attempt + 1}: --backoff, doubling, at most 10 minutes. */
  private Duration backoff(int attempt) {
    Duration d = backoff.multipliedBy(1L << Math.min(attempt - 1, 20));
    return d.compareTo(Duration.ofMinutes(10)) > 0 ? Duration.ofMinutes(10) : d;
  }

  private static String summary(long done, long failed, long dead) {
    return "stopped: "
        + done
        + " done, "
        + failed
        + " failed attempt(s), "
        + dead
        + " dead-lettered";
  }

  /** The program, started at the first event (a process per event with --per-event). */
  private Program program() {
    return Program.builder(command)
        .name("consume")
        .perEvent(perEvent)
        .replyTimeout(replyTimeout)
        .build();
  }
}
