package io.boxline.cli;

import io.boxline.Admin;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.EventPosition;
import io.boxline.TopicName;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code boxline dead-letters list|reasons|redrive|discard SUB [filters]}. */
@Command(
    name = "dead-letters",
    description = "List, redrive or discard the events a subscription gave up on.",
    subcommands = {
      DeadLetterCommands.ListCommand.class,
      DeadLetterCommands.Reasons.class,
      DeadLetterCommands.Redrive.class,
      DeadLetterCommands.Discard.class
    })
final class DeadLetterCommands {

  /** The filters every dead-letter subcommand takes; they combine with AND. */
  static final class Filter {
    @Parameters(paramLabel = "SUBSCRIPTION")
    String subscription;

    @Option(names = "--topic", description = "only events of this topic")
    String topic;

    @Option(names = "--type", description = "only events of this type")
    String type;

    @Option(names = "--key", description = "only events with this key")
    String key;

    @Option(names = "--event-id", description = "only the event with this id")
    UUID eventId;

    @Option(names = "--error", description = "only those whose last error contains this text")
    String error;

    @Option(names = "--dead-before", description = "only those dead before this ISO-8601 time")
    Instant deadBefore;

    @Option(names = "--dead-after", description = "only those dead after this ISO-8601 time")
    Instant deadAfter;

    @Option(
        names = "--after",
        paramLabel = "POSITION",
        description = "only those past namespace/topic/partition/sequence (paging)")
    String after;

    DeadLetterQuery query(int limit) {
      return new DeadLetterQuery(
          subscription,
          topic == null ? null : TopicName.parse(topic),
          type,
          key,
          eventId,
          error,
          deadBefore,
          deadAfter,
          after == null ? null : EventPosition.parse(after),
          limit);
    }
  }

  @Command(
      name = "list",
      description = "Dead letters in log order.",
      footer = {"%nExample:%n  boxline dead-letters list billing --type OrderPlaced --limit 20"})
  static final class ListCommand extends InspectCommands.Base {
    @Mixin Filter filter;

    @Option(names = "--limit", description = "at most this many (default 100)")
    int limit = 100;

    @Override
    void run(Admin admin, Connection.Session session) {
      List<DeadLetter> list = session.deadLetters().list(filter.query(limit));
      if (output.json()) {
        List<Object> rows = new ArrayList<>();
        for (DeadLetter d : list) {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("position", EventPosition.of(d.event()).toString());
          m.put("event", Output.event(d.event()));
          m.put("attempts", d.attempts());
          m.put("lastError", d.lastError());
          m.put("firstFailedAt", Output.time(d.firstFailedAt()));
          m.put("deadAt", Output.time(d.deadAt()));
          rows.add(m);
        }
        out().println(Output.json(rows));
        return;
      }
      Output.Table t =
          new Output.Table("POSITION", "KEY", "TYPE", "ATTEMPTS", "DEAD AT", "LAST ERROR");
      for (DeadLetter d : list) {
        t.row(
            EventPosition.of(d.event()),
            d.event().key(),
            d.event().type(),
            d.attempts(),
            d.deadAt(),
            d.lastError() == null ? null : Failures.oneLine(d.lastError()));
      }
      t.print(out());
    }
  }

  @Command(
      name = "reasons",
      description =
          "Dead letters grouped by the start of their last error, the largest group first; pass a"
              + " reason to --error to list, redrive or discard its group.",
      footer = {"%nExample:%n  boxline dead-letters reasons billing"})
  static final class Reasons extends InspectCommands.Base {
    @Parameters(paramLabel = "SUBSCRIPTION")
    String subscription;

    @Option(names = "--limit", description = "at most this many groups, 1 to 1000 (default 100)")
    int limit = 100;

    @Override
    void run(Admin admin, Connection.Session session) {
      List<io.boxline.DeadLetterReason> reasons =
          session.deadLetters().reasons(subscription, limit);
      if (output.json()) {
        List<Object> rows = new ArrayList<>();
        for (io.boxline.DeadLetterReason r : reasons) {
          Map<String, Object> m = new LinkedHashMap<>();
          m.put("reason", r.reason());
          m.put("count", r.count());
          m.put("firstDeadAt", Output.time(r.firstDeadAt()));
          m.put("lastDeadAt", Output.time(r.lastDeadAt()));
          rows.add(m);
        }
        out().println(Output.json(rows));
        return;
      }
      Output.Table t = new Output.Table("COUNT", "FIRST DEAD", "LAST DEAD", "REASON");
      for (io.boxline.DeadLetterReason r : reasons) {
        t.row(r.count(), r.firstDeadAt(), r.lastDeadAt(), Failures.oneLine(r.reason()));
      }
      t.print(out());
    }
  }

  /** Redrive and discard: count what matches, confirm, act, report. */
  abstract static class Act extends InspectCommands.Base {
    @Mixin Filter filter;

    @Option(names = "--limit", description = "at most this many (default 100000)")
    int limit = 100_000;

    @Option(
        names = {"-y", "--yes"},
        description = "do not ask for confirmation")
    boolean yes;

    abstract String verb();

    abstract int act(Connection.Session session, DeadLetterQuery q);

    @Override
    void run(Admin admin, Connection.Session session) {
      DeadLetterQuery q = filter.query(limit);
      int matching = session.countDeadLetters(q);
      if (matching == 0) {
        report(0);
        return;
      }
      Confirm.orRefuse(
          yes,
          out(),
          verb() + " " + matching + " dead letter(s) of " + filter.subscription + "?",
          matching + " dead letter(s) of " + filter.subscription + " match");
      report(act(session, q));
    }

    private void report(int n) {
      if (output.json()) {
        out().println(Output.json(Map.of("action", verb().toLowerCase(), "count", n)));
      } else {
        out().println(verb() + ": " + n + " dead letter(s) of " + filter.subscription);
      }
      out().flush();
    }
  }

  @Command(
      name = "redrive",
      description = "Send matching dead letters back for handling, with a fresh attempt count.",
      footer = {"%nExample:%n  boxline dead-letters redrive billing --key order-42 --yes"})
  static final class Redrive extends Act {
    @Override
    String verb() {
      return "Redrive";
    }

    @Override
    int act(Connection.Session session, DeadLetterQuery q) {
      return session.deadLetters().redrive(q);
    }
  }

  @Command(
      name = "discard",
      description = "Delete matching dead letters for good.",
      footer = {
        "%nExample:%n  boxline dead-letters discard billing --dead-before 2026-01-01T00:00:00Z"
      })
  static final class Discard extends Act {
    @Override
    String verb() {
      return "Discard";
    }

    @Override
    int act(Connection.Session session, DeadLetterQuery q) {
      return session.deadLetters().discard(q);
    }
  }
}
