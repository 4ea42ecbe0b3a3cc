package io.boxline.cli;

import io.boxline.Admin;
import io.boxline.EventPosition;
import io.boxline.FailureCounts;
import io.boxline.GroupState;
import io.boxline.OutboxBacklog;
import io.boxline.PartitionLag;
import io.boxline.RetryingEvent;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.TopicState;
import io.boxline.client.ForbiddenException;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** The read-only subcommands: status, topics, subscriptions, members, lag, retries. */
final class InspectCommands {
  private InspectCommands() {}

  /** What every command has: the connection, the output format, the terminal. */
  abstract static class Base implements Callable<Integer> {
    @Mixin Connection connection;
    @Mixin Output output;
    @Spec picocli.CommandLine.Model.CommandSpec spec;

    PrintWriter out() {
      return spec.commandLine().getOut();
    }

    @Override
    public Integer call() throws Exception {
      try (Connection.Session s = connection.open()) {
        run(s.admin(), s);
      }
      return ExitCodes.OK;
    }

    abstract void run(Admin admin, Connection.Session session) throws Exception;
  }

  @Command(
      name = "status",
      description = "One screen: topics, subscriptions with backlog and failures, the outbox.",
      footer = {"%nExample:%n  boxline status --url jdbc:postgresql://db:5432/app"})
  static final class Status extends Base {
    @Override
    void run(Admin admin, Connection.Session session) {
      Instant now = Instant.now();
      List<TopicInfo> topics = admin.topics();
      List<SubscriptionInfo> subs = admin.subscriptions();
      Map<String, List<PartitionLag>> lag = admin.lagBySubscription();
      Map<String, FailureCounts> failures = new LinkedHashMap<>();
      admin.failures().forEach(f -> failures.put(f.subscription(), f));
      // Over a server: the outbox needs a token for every namespace, and blocked tasks a database.
      OutboxBacklog outbox = outbox(admin);
      Long blocked = session.overServer() ? null : admin.blockedTasks();
      if (output.json()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("namespaces", admin.namespaces().size());
        m.put("topics", topics.size());
        m.put(
            "outbox",
            outbox == null
                ? null
                : Map.of(
                    "events",
                    outbox.events(),
                    "oldestCreatedAt",
                    String.valueOf(outbox.oldestCreatedAt())));
        m.put("blockedTasks", blocked);
        List<Object> list = new ArrayList<>();
        for (SubscriptionInfo s : subs) {
          FailureCounts f = failures.getOrDefault(s.name(), FailureCounts.none(s.name()));
          Map<String, Object> sm = new LinkedHashMap<>();
          sm.put("name", s.name());
          sm.put("backlog", backlog(lag.get(s.name())));
          sm.put("oldestUnhandledAt", Output.time(oldest(lag.get(s.name()))));
          sm.put("retrying", f.retrying());
          sm.put("waiting", f.waiting());
          sm.put("deadLetters", f.deadLetters());
          list.add(sm);
        }
        m.put("subscriptions", list);
        out().println(Output.json(m));
        return;
      }
      out()
          .printf(
              "%d topics, %d subscriptions; outbox: %s; blocked tasks: %s%n%n",
              topics.size(),
              subs.size(),
              outbox == null
                  ? "not shown (needs a token for every namespace)"
                  : outbox.events()
                      + " events waiting for the sequencer"
                      + (outbox.oldestCreatedAt() == null
                          ? ""
                          : " (oldest " + Output.age(outbox.oldestCreatedAt(), now) + ")"),
              blocked == null ? "not shown (needs a database connection)" : blocked);
      Output.Table t =
          new Output.Table("SUBSCRIPTION", "BACKLOG", "OLDEST", "RETRYING", "WAITING", "DEAD");
      for (SubscriptionInfo s : subs) {
        FailureCounts f = failures.getOrDefault(s.name(), FailureCounts.none(s.name()));
        t.row(
            s.name(),
            backlog(lag.get(s.name())),
            Output.age(oldest(lag.get(s.name())), now),
            f.retrying(),
            f.waiting(),
            f.deadLetters());
      }
      t.print(out());
    }
  }

  /** The outbox, or null where the server refuses it to a token limited to some namespaces. */
  private static OutboxBacklog outbox(Admin admin) {
    try {
      return admin.outboxBacklog();
    } catch (ForbiddenException e) {
      return null; // over a server, a token of some namespaces only
    }
  }

  static long backlog(List<PartitionLag> lags) {
    return lags == null ? 0 : lags.stream().mapToLong(PartitionLag::backlog).sum();
  }

  static Instant oldest(List<PartitionLag> lags) {
    Instant o = null;
    if (lags != null) {
      for (PartitionLag l : lags) {
        if (l.oldestUnhandledAt() != null && (o == null || l.oldestUnhandledAt().isBefore(o))) {
          o = l.oldestUnhandledAt();
        }
      }
    }
    return o;
  }

  @Command(
      name = "topics",
      description = "Every topic: partitions, sequencing, events in the log, retention.",
      footer = {"%nExample:%n  boxline topics -o json"})
  static final class Topics extends Base {
    @Override
    void run(Admin admin, Connection.Session session) {
      List<Map<String, Object>> rows = new ArrayList<>();
      for (TopicInfo t : admin.topics()) {
        TopicState st = admin.topicState(t.name());
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("topic", t.name().toString());
        m.put("partitions", t.partitions());
        m.put("sequencing", t.sequencing().name());
        m.put("lastSequences", st.heads());
        m.put("retention", Output.retention(st.retention()));
        m.put("createdAt", Output.time(t.createdAt()));
        rows.add(m);
      }
      if (output.json()) {
        out().println(Output.json(rows));
        return;
      }
      Output.Table t =
          new Output.Table("TOPIC", "PARTITIONS", "SEQUENCING", "EVENTS", "RETENTION", "CREATED");
      for (Map<String, Object> m : rows) {
        @SuppressWarnings("unchecked")
        List<Long> heads = (List<Long>) m.get("lastSequences");
        t.row(
            m.get("topic"),
            m.get("partitions"),
            m.get("sequencing"),
            heads.stream().mapToLong(Long::longValue).sum(),
            m.get("retention"),
            m.get("createdAt"));
      }
      t.print(out());
    }
  }

  @Command(
      name = "subscriptions",
      description =
          "Every subscription: its topics, start position, last active consumer, backlog.",
      footer = {"%nExample:%n  boxline subscriptions -o json"})
  static final class Subscriptions extends Base {
    @Override
    void run(Admin admin, Connection.Session session) {
      Map<String, List<PartitionLag>> lag = admin.lagBySubscription();
      if (output.json()) {
        List<Object> rows = new ArrayList<>();
        for (SubscriptionInfo s : admin.subscriptions()) {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("name", s.name());
          m.put("topics", s.topics().stream().map(Object::toString).toList());
          m.put("start", s.start() == null ? null : s.start().toString());
          m.put("createdAt", Output.time(s.createdAt()));
          m.put("lastActive", Output.time(s.lastActive()));
          m.put("backlog", backlog(lag.get(s.name())));
          rows.add(m);
        }
        out().println(Output.json(rows));
        return;
      }
      Output.Table t =
          new Output.Table("SUBSCRIPTION", "TOPICS", "START", "LAST ACTIVE", "BACKLOG");
      for (SubscriptionInfo s : admin.subscriptions()) {
        t.row(
            s.name(),
            String.join(",", s.topics().stream().map(Object::toString).toList()),
            s.start(),
            s.lastActive(),
            backlog(lag.get(s.name())));
      }
      t.print(out());
    }
  }

  @Command(
      name = "members",
      description =
          "A subscription's consumer group: each member's weight, leases, host, process,"
              + " last check-in and the handler call it has been in longest.",
      footer = {"%nExample:%n  boxline members billing"})
  static final class Members extends Base {
    @Parameters(paramLabel = "SUBSCRIPTION")
    String subscription;

    @Override
    void run(Admin admin, Connection.Session session) {
      GroupState g = admin.group(subscription);
      if (output.json()) {
        List<Object> rows = new ArrayList<>();
        for (GroupState.Member m : g.members()) {
          Map<String, Object> mm = new LinkedHashMap<>();
          mm.put("id", m.id());
          mm.put("weight", m.weight());
          mm.put("leases", m.leases());
          mm.put("host", m.host());
          mm.put("process", m.process());
          mm.put("lastCheckIn", Output.time(m.lastCheckIn()));
          mm.put("deadline", Output.time(m.deadline()));
          List<Object> calls = new ArrayList<>();
          for (GroupState.InFlight f : m.inFlight()) {
            calls.add(
                Map.of(
                    "topic", f.topic().toString(),
                    "partition", f.partition(),
                    "fromSequence", f.fromSequence(),
                    "toSequence", f.toSequence(),
                    "events", f.events(),
                    "startedAt", f.startedAt().toString()));
          }
          mm.put("inFlight", calls);
          rows.add(mm);
        }
        out().println(Output.json(Map.of("subscription", g.subscription(), "members", rows)));
        return;
      }
      Output.Table t =
          new Output.Table(
              "MEMBER", "WEIGHT", "LEASES", "HOST", "PROCESS", "CHECKED IN", "IN FLIGHT");
      for (GroupState.Member m : g.members()) {
        String flight = "-";
        if (!m.inFlight().isEmpty()) {
          GroupState.InFlight f = m.inFlight().get(0);
          flight =
              m.inFlight().size()
                  + " call(s), oldest "
                  + f.topic()
                  + "/"
                  + f.partition()
                  + "/"
                  + f.fromSequence()
                  + " for "
                  + Output.age(f.startedAt(), g.readAt());
        }
        t.row(
            m.id(),
            m.weight(),
            m.leases(),
            m.host(),
            m.process(),
            m.lastCheckIn() == null ? "-" : Output.age(m.lastCheckIn(), g.readAt()) + " ago",
            flight);
      }
      if (t.isEmpty()) {
        out().println("no live members in " + g.subscription());
      } else {
        t.print(out());
      }
    }
  }

  @Command(
      name = "lag",
      description =
          "Per partition: head, cursor, lag in events and age, owner and epoch. Without a"
              + " subscription: every subscription's total.",
      footer = {"%nExamples:%n  boxline lag billing%n  boxline lag billing --watch 2"})
  static final class Lag extends Base {
    @Parameters(paramLabel = "SUBSCRIPTION", arity = "0..1")
    String subscription;

    @Option(
        names = "--watch",
        arity = "0..1",
        fallbackValue = "2",
        paramLabel = "SECONDS",
        description = "repaint every SECONDS (default 2) until Ctrl-C")
    Double watch;

    @Override
    void run(Admin admin, Connection.Session session) throws InterruptedException {
      if (watch == null) {
        once(admin);
        return;
      }
      if (watch < 0.2) {
        throw new CliException(ExitCodes.USAGE, "--watch takes at least 0.2 seconds, got " + watch);
      }
      while (!Thread.currentThread().isInterrupted()) {
        if (System.console() != null) {
          out().print("\033[H\033[2J"); // clear the screen of a terminal
        }
        out().println("every " + watch + " s, Ctrl-C to stop — " + Instant.now());
        once(admin);
        Thread.sleep((long) (watch * 1000));
      }
    }

    private void once(Admin admin) {
      Instant now = Instant.now();
      if (subscription == null) {
        Map<String, List<PartitionLag>> all = admin.lagBySubscription();
        if (output.json()) {
          Map<String, Object> m = new LinkedHashMap<>();
          all.forEach(
              (k, v) ->
                  m.put(
                      k,
                      Map.of(
                          "backlog", backlog(v), "oldestUnhandledAt", String.valueOf(oldest(v)))));
          out().println(Output.json(m));
          return;
        }
        Output.Table t = new Output.Table("SUBSCRIPTION", "LAG", "AGE");
        all.forEach((k, v) -> t.row(k, backlog(v), Output.age(oldest(v), now)));
        t.print(out());
        return;
      }
      GroupState g = admin.group(subscription);
      if (output.json()) {
        List<Object> rows = new ArrayList<>();
        for (GroupState.Partition p : g.partitions()) {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("topic", p.lag().topic().toString());
          m.put("partition", p.lag().partition());
          m.put("head", p.lag().lastSequence());
          m.put("cursor", p.lag().position());
          m.put("lag", p.lag().backlog());
          m.put("oldestUnhandledAt", Output.time(p.lag().oldestUnhandledAt()));
          m.put("owner", p.owner());
          m.put("epoch", p.epoch());
          m.put("releasing", p.releasing());
          rows.add(m);
        }
        out().println(Output.json(Map.of("subscription", g.subscription(), "partitions", rows)));
        return;
      }
      Output.Table t =
          new Output.Table("TOPIC", "PARTITION", "HEAD", "CURSOR", "LAG", "AGE", "OWNER", "EPOCH");
      long total = 0;
      for (GroupState.Partition p : g.partitions()) {
        total += p.lag().backlog();
        t.row(
            p.lag().topic(),
            p.lag().partition(),
            p.lag().lastSequence(),
            p.lag().position(),
            p.lag().backlog(),
            Output.age(p.lag().oldestUnhandledAt(), now),
            p.owner() == null ? "-" : p.owner() + (p.releasing() ? " (releasing)" : ""),
            p.owner() == null ? "-" : p.epoch());
      }
      t.print(out());
      out().println("total lag " + total + " events, " + g.members().size() + " member(s)");
      out().flush();
    }
  }

  @Command(
      name = "retries",
      description =
          "Events of a subscription waiting for a retry or behind an earlier event of their"
              + " key, in log order.",
      footer = {
        "%nExample:%n  boxline retries billing --limit 50 --after acme/billing/invoices/3/120"
      })
  static final class Retries extends Base {
    @Parameters(paramLabel = "SUBSCRIPTION")
    String subscription;

    @Option(names = "--limit", description = "at most this many (default 100)")
    int limit = 100;

    @Option(
        names = "--after",
        paramLabel = "POSITION",
        description = "start after this position, namespace/topic/partition/sequence (paging)")
    String after;

    @Override
    void run(Admin admin, Connection.Session session) {
      EventPosition from = after == null ? null : EventPosition.parse(after);
      List<RetryingEvent> list = admin.retrying(subscription, from, limit);
      if (output.json()) {
        List<Object> rows = new ArrayList<>();
        for (RetryingEvent r : list) {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("position", EventPosition.of(r.event()).toString());
          m.put("event", Output.event(r.event()));
          m.put("behindItsKey", r.behindItsKey());
          m.put("attempts", r.attempts());
          m.put("nextAttemptAt", Output.time(r.nextAttemptAt()));
          m.put("lastError", r.lastError());
          rows.add(m);
        }
        out().println(Output.json(rows));
        return;
      }
      Output.Table t =
          new Output.Table("POSITION", "KEY", "TYPE", "ATTEMPTS", "NEXT ATTEMPT", "LAST ERROR");
      for (RetryingEvent r : list) {
        t.row(
            EventPosition.of(r.event()),
            r.event().key(),
            r.event().type(),
            r.behindItsKey() ? "behind its key" : r.attempts(),
            r.nextAttemptAt(),
            r.lastError() == null ? null : Failures.oneLine(r.lastError()));
      }
      t.print(out());
    }
  }
}
