package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.RemoteConsumers;
import io.boxline.RemoteConsumers.Settlement;
import io.boxline.SubscriptionInfo;
import io.boxline.server.internal.Auth.Action;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Consuming as a member of a subscription's group over HTTP: fetch (long-poll), settle, leave.
 * Every call goes to {@link RemoteConsumers}, which keeps nothing in memory: any server instance
 * serves any member.
 */
final class ConsumeApi {
  static final int MAX_WAIT_MILLIS = 30_000;

  private final Boxline boxline;

  /** The subscriptions members use, looked up once every few seconds rather than per request. */
  private final KnownSubscriptions known;

  private final java.util.function.BooleanSupplier running;

  /** How often the waiting members are looked at for a renewal: under half the default interval. */
  static final long RENEW_EVERY_MILLIS = 500;

  private final java.util.concurrent.ScheduledExecutorService renewer;
  private final java.util.concurrent.atomic.AtomicLong renewed =
      new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong renewalFailures =
      new java.util.concurrent.atomic.AtomicLong();

  ConsumeApi(
      Boxline boxline, KnownSubscriptions known, java.util.function.BooleanSupplier running) {
    this.boxline = boxline;
    this.known = known;
    this.running = running;
    this.renewer =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "boxline-member-renewal");
              t.setDaemon(true);
              return t;
            });
    renewer.scheduleWithFixedDelay(
        this::renewWaiting, RENEW_EVERY_MILLIS, RENEW_EVERY_MILLIS, TimeUnit.MILLISECONDS);
  }

  /**
   * Checks in the members whose long polls wait here, together per subscription, so a waiting
   * member costs no statement of its own: {@link RemoteConsumers#renew} writes once for a group
   * when one of them falls due, and a renewed poll's check-in timer then waits on instead of
   * fetching.
   */
  private void renewWaiting() {
    try {
      long now = System.nanoTime();
      List<Poll> open = new java.util.ArrayList<>();
      polls.values().forEach(open::addAll);
      open.removeIf(p -> p.left || p.gone);
      answered
          .values()
          .removeIf(a -> now - a.at() > TimeUnit.MILLISECONDS.toNanos(2 * RENEW_EVERY_MILLIS));
      // Every member with a poll here, and those whose poll answered a moment ago (their next one
      // is on its way): a group's members renewed together keep one phase, none falls due alone.
      Map<String, SubscriptionInfo> subscriptions = new java.util.HashMap<>();
      Map<String, Set<String>> members = new java.util.HashMap<>();
      List<Answered> waiting = new java.util.ArrayList<>(answered.values());
      open.forEach(p -> waiting.add(new Answered(p.subscription, p.member, now)));
      for (Answered a : waiting) {
        subscriptions.putIfAbsent(a.subscription().name(), a.subscription());
        members
            .computeIfAbsent(a.subscription().name(), k -> new java.util.HashSet<>())
            .add(a.member());
      }
      for (Map.Entry<String, Set<String>> e : members.entrySet()) {
        Map<String, Duration> got =
            boxline.remoteConsumers().renew(subscriptions.get(e.getKey()), e.getValue());
        long at = System.nanoTime();
        for (Poll p : open) {
          Duration d = p.subscription.name().equals(e.getKey()) ? got.get(p.member) : null;
          if (d != null) {
            p.checkInDueAtLeast(at + d.toNanos());
          }
        }
        renewed.addAndGet(got.size());
      }
    } catch (RuntimeException e) {
      // The members check in with their own fetches meanwhile; the next round tries again.
      if (renewalFailures.getAndIncrement() % 100 == 0) {
        System.getLogger(ConsumeApi.class.getName())
            .log(
                System.Logger.Level.WARNING,
                "renewing the waiting members failed (they check in by fetching meanwhile)",
                e);
      }
    }
  }

  /** A member whose poll answered, and when. */
  private record Answered(SubscriptionInfo subscription, String member, long at) {}

  /** Members whose poll answered lately, by subscription and member. */
  private final Map<String, Answered> answered = new ConcurrentHashMap<>();

  private final java.util.concurrent.atomic.AtomicLong fetches =
      new java.util.concurrent.atomic.AtomicLong();

  /** Fetches long polls have made so far (each a check-in or a read), for the metrics. */
  long fetches() {
    return fetches.get();
  }

  /** Members checked in by renewals so far, for the metrics. */
  long renewed() {
    return renewed.get();
  }

  /** Stops the renewals; waits for a round in progress, up to {@code timeout}. */
  void close(Duration timeout) {
    renewer.shutdownNow();
    try {
      renewer.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  void register(Router r) {
    r.add("POST", "/v1/subscriptions/{subscription}/members/{member}/fetch", this::fetch);
    r.add("POST", "/v1/subscriptions/{subscription}/members/{member}/settle", this::settle);
    r.add("DELETE", "/v1/subscriptions/{subscription}/members/{member}", this::leave);
  }

  /** Long polls waiting between two fetches on this instance (they hold no thread). */
  private final java.util.concurrent.atomic.AtomicInteger waiting =
      new java.util.concurrent.atomic.AtomicInteger();

  /** Ends every wait now (the server stops): each poll fetches once more and answers. */
  void wakeAll() {
    polls.values().forEach(set -> set.forEach(Poll::wake));
  }

  /** How many long polls wait between two fetches, for the gauge. */
  int waiting() {
    return waiting.get();
  }

  /** Long polls in flight on this instance, by subscription and member, so a leave ends them. */
  private final Map<String, Set<Poll>> polls = new ConcurrentHashMap<>();

  /** One long poll: what it fetches, until when; cancelled when its member leaves. */
  private static final class Poll {
    final SubscriptionInfo subscription;
    final String member;
    final double weight;
    final int max;
    final boolean raw;
    final long deadline;
    final String key;

    /** Events the request settled before it fetched, or -1 when it settled none. */
    final int settled;

    volatile boolean left;

    /** The client's connection failed or closed: the poll ends without checking in again. */
    volatile boolean gone;

    /** Fetches so far (one step at a time, so no two threads count at once). */
    int fetched;

    /** What the poll waits on between two fetches; completing it ends the wait. */
    volatile CompletableFuture<Void> waitingOn;

    /** When the member's next check-in is due (nanoTime); a renewal moves it on. */
    volatile long checkInDue;

    /**
     * Moves the member's next check-in on, never back: a renewal and the poll's own fetch may tell
     * it at once, and the later time is the true one.
     */
    synchronized void checkInDueAtLeast(long at) {
      if (at - checkInDue > 0) {
        checkInDue = at;
      }
    }

    void wake() {
      CompletableFuture<Void> w = waitingOn;
      if (w != null) {
        w.complete(null);
      }
    }

    Poll(
        SubscriptionInfo subscription,
        String member,
        double weight,
        int max,
        boolean raw,
        long deadline,
        int settled) {
      this.key = subscription.name() + "\n" + member;
      this.checkInDue = System.nanoTime();
      this.settled = settled;
      this.subscription = subscription;
      this.member = member;
      this.weight = weight;
      this.max = max;
      this.raw = raw;
      this.deadline = deadline;
    }
  }

  private SubscriptionInfo subscription(Call c) {
    c.caller.require(Action.CONSUME);
    return AdminApi.visibleSubscription(known::find, c.caller, c.param("subscription"));
  }

  /** The subscription of a long poll that waited: it may have been deleted meanwhile. */
  private SubscriptionInfo stillThere(String name) {
    return known
        .find(name)
        .orElseThrow(
            () -> new io.boxline.NotFoundException("subscription '" + name + "' does not exist"));
  }

  /** The member of the path as the group knows it: bound to the calling token. */
  private static String member(Call c) {
    return MemberWire.memberId(c.caller, c.param("member"));
  }

  /**
   * A long poll that holds no thread while it waits: each step fetches (which checks the member in)
   * and answers when there are events, the wait is over or the server stops; otherwise it waits
   * until a log of the subscription's topics grows (here or, through the database's signal, on
   * another instance) or the member is due to check in, and fetches again.
   */
  private void fetch(Call c) {
    SubscriptionInfo s = subscription(c);
    String member = member(c);
    ApiRequests.Fetch body = c.bodyOrEmpty(ApiRequests.Fetch.class);
    double weight = body.weight() == null ? 1.0 : body.weight();
    int max = body.max() == null ? 100 : body.max();
    int waitMillis = body.waitMillis() == null ? 0 : body.waitMillis();
    if (waitMillis < 0 || waitMillis > MAX_WAIT_MILLIS) {
      throw ApiException.badRequest(
          "waitMillis must be between 0 and " + MAX_WAIT_MILLIS + ", got " + waitMillis);
    }
    boolean raw = Payloads.base64(body.payload());
    // What the last batch's handling came to, settled before this fetch: one round trip a cycle.
    // A refused settlement answers as a settle would, and nothing is fetched.
    int settled = -1;
    if (body.settle() != null) {
      List<Settlement> settlements =
          MemberWire.settlements(body.settle(), c.caller.ackKey(), s.name(), member);
      settled = Call.valid(() -> boxline.remoteConsumers().settle(s, member, settlements));
    }
    Poll poll =
        new Poll(s, member, weight, max, raw, System.nanoTime() + waitMillis * 1_000_000L, settled);
    polls.computeIfAbsent(poll.key, k -> ConcurrentHashMap.newKeySet()).add(poll);
    // A client that dies in a long poll (killed, its connection cut) closes its connection: the
    // poll stops checking the member in, so it leaves the group at its deadline, not at the end of
    // waitMillis. HTTP/2 reports it here; an HTTP/1 connection is probed before each check-in.
    c.request.addFailureListener(
        failure -> {
          poll.gone = true;
          poll.wake();
        });
    step(c, poll);
  }

  /**
   * One fetch of a long poll; answers, or waits without a thread and comes back. The wait is taken
   * before the fetch, so an event that arrives during the fetch ends it at once.
   */
  private void step(Call c, Poll poll) {
    try {
      RemoteConsumers members = boxline.remoteConsumers();
      String name = poll.subscription.name();
      long left = (poll.deadline - System.nanoTime()) / 1_000_000;
      CompletableFuture<Void> woken =
          left > 0
              // Longer than the poll: the wait's end is the check-in timer's to see (below), so
              // this completes only when events come.
              ? members.awaitAppend(poll.subscription.topics(), Duration.ofMillis(left + 1_000))
              : null;
      fetches.incrementAndGet();
      RemoteConsumers.Batch batch =
          Call.valid(
              () ->
                  // The subscription was looked up for this request; a later step of a long poll
                  // looks again (it may have been deleted meanwhile).
                  members.fetch(
                      poll.fetched++ == 0 ? poll.subscription : stillThere(name),
                      poll.member,
                      poll.weight,
                      poll.max));
      if (poll.left) {
        // The member left while this poll ran: it stays out, and what was read goes back.
        members.leave(name, poll.member);
        batch = new RemoteConsumers.Batch(List.of(), List.of(), batch.checkInWithin());
      }
      if (woken == null || poll.left || !batch.deliveries().isEmpty() || !running.getAsBoolean()) {
        if (woken != null) {
          woken.cancel(false);
        }
        answer(c, poll, batch);
        return;
      }
      // Fetch again when events come, or when the member must check in again (a fetch is its
      // check-in), or at the end of the wait.
      poll.checkInDueAtLeast(System.nanoTime() + batch.checkInWithin().toNanos());
      await(c, poll, woken);
    } catch (RuntimeException e) {
      forget(poll);
      throw e;
    }
  }

  /**
   * Waits, holding no thread, until events come, the wait ends or the member's check-in is due;
   * then answers, fetches again, or, when a renewal checked the member in meanwhile, waits on.
   */
  private void await(Call c, Poll poll, CompletableFuture<Void> woken) {
    long now = System.nanoTime();
    long untilCheckIn = Math.min(poll.checkInDue - now, poll.deadline - now);
    // true: events came (or a leave, a closed connection, a stop, the end of the wait); false: the
    // member's check-in is due.
    CompletableFuture<Boolean> step =
        woken
            .handle((v, e) -> true)
            .completeOnTimeout(
                false,
                Math.max(0, TimeUnit.NANOSECONDS.toMillis(untilCheckIn)),
                TimeUnit.MILLISECONDS);
    waiting.incrementAndGet();
    poll.waitingOn = woken;
    if (poll.left || poll.gone || !running.getAsBoolean()) {
      woken.complete(null); // a leave, a closed connection or a stop that came during the fetch
    }
    c.later(
        step,
        next -> {
          waiting.decrementAndGet();
          if (!poll.gone && next.peerClosed()) {
            poll.gone = true;
          }
          // At the end of its wait a poll answers without fetching again: the member checked in
          // within its interval (at its last fetch, or by a renewal), and its next poll fetches at
          // once; an event that came just now is in that fetch.
          boolean over = System.nanoTime() - poll.deadline >= 0;
          if (poll.left || poll.gone || over) {
            woken.cancel(false);
            Duration within =
                Duration.ofNanos(Math.max(1_000_000, poll.checkInDue - System.nanoTime()));
            answer(next, poll, new RemoteConsumers.Batch(List.of(), List.of(), within));
          } else if (!step.getNow(true) && System.nanoTime() - poll.checkInDue < 0) {
            await(next, poll, woken); // renewed meanwhile: nothing came, nothing to check in
          } else {
            woken.cancel(false);
            step(next, poll);
          }
        });
  }

  private void forget(Poll poll) {
    polls.computeIfPresent(
        poll.key,
        (k, set) -> {
          set.remove(poll);
          return set.isEmpty() ? null : set;
        });
  }

  private void answer(Call c, Poll poll, RemoteConsumers.Batch batch) {
    forget(poll);
    if (!poll.left && !poll.gone) {
      answered.put(poll.key, new Answered(poll.subscription, poll.member, System.nanoTime()));
    }
    ApiBodies.MemberBatch view =
        MemberWire.batch(c.caller.ackKey(), poll.subscription.name(), poll.member, batch, poll.raw);
    c.json(200, poll.settled >= 0 ? view.settled(poll.settled) : view);
  }

  private void settle(Call c) {
    SubscriptionInfo s = subscription(c);
    String member = member(c);
    List<Settlement> settlements =
        MemberWire.settlements(
            c.body(ApiRequests.Settle.class).settle(), c.caller.ackKey(), s.name(), member);
    int n = Call.valid(() -> boxline.remoteConsumers().settle(s, member, settlements));
    c.json(200, new ApiBodies.Settled(n));
  }

  private void leave(Call c) {
    SubscriptionInfo s = subscription(c);
    String member = member(c);
    if (c.bodyBytes.length > 0) {
      throw ApiException.badRequest("leaving takes no body");
    }
    answered.remove(s.name() + "\n" + member);
    Set<Poll> inFlight = polls.get(s.name() + "\n" + member);
    if (inFlight != null) {
      inFlight.forEach(
          p -> {
            p.left = true;
            p.wake();
          });
    }
    Call.valid(
        () -> {
          boxline.remoteConsumers().leave(s.name(), member);
          return null;
        });
    c.json(200, new ApiBodies.Left(s.name(), c.param("member"), true));
  }
}
