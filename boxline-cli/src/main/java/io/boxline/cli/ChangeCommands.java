package io.boxline.cli;

import io.boxline.Admin;
import io.boxline.GroupPolicy;
import io.boxline.NamespacePath;
import io.boxline.PartitionLag;
import io.boxline.RetentionPolicy;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The subcommands that change things: create, delete, rewind, retention, group-policy, migrate. */
final class ChangeCommands {
  private ChangeCommands() {}

  static StartPosition position(String option, String text) {
    switch (text) {
      case "earliest":
        return StartPosition.earliest();
      case "latest":
        return StartPosition.latest();
      default:
        try {
          return StartPosition.at(Instant.parse(text));
        } catch (DateTimeParseException e) {
          throw new CliException(
              ExitCodes.USAGE,
              option
                  + " takes earliest, latest or an ISO-8601 time (2026-11-25T09:00:00Z), got '"
                  + text
                  + "'");
        }
    }
  }

  @Command(
      name = "create",
      description = "Create a namespace, a topic or a subscription (idempotent).",
      subcommands = {CreateNamespace.class, CreateTopic.class, CreateSubscription.class})
  static final class Create {}

  @Command(
      name = "namespace",
      description = "Create a namespace and its missing parents.",
      footer = {"%nExample:%n  boxline create namespace acme/billing"})
  static final class CreateNamespace extends InspectCommands.Base {
    @Parameters(paramLabel = "PATH")
    String path;

    @Override
    void run(Admin admin, Connection.Session session) {
      admin.createNamespace(NamespacePath.of(path));
      out().println("namespace " + path);
      out().flush();
    }
  }

  @Command(
      name = "topic",
      description = "Create a topic in an existing namespace; its partition count never changes.",
      footer = {"%nExample:%n  boxline create topic acme/billing/invoices --partitions 8"})
  static final class CreateTopic extends InspectCommands.Base {
    @Parameters(paramLabel = "TOPIC")
    String topic;

    @Option(names = "--partitions", required = true, description = "1 to 65536")
    int partitions;

    @Option(names = "--sequencing", description = "SEQUENCER (default) or IN_TRANSACTION")
    Sequencing sequencing = Sequencing.SEQUENCER;

    @Override
    void run(Admin admin, Connection.Session session) {
      TopicInfo t = admin.createTopic(TopicName.parse(topic), partitions, sequencing);
      out().println("topic " + t.name() + ", " + t.partitions() + " partitions, " + t.sequencing());
      out().flush();
    }
  }

  @Command(
      name = "subscription",
      description = "Create a subscription to one or more topics.",
      footer = {
        "%nExample:",
        "  boxline create subscription billing --topic acme/billing/invoices --start earliest"
      })
  static final class CreateSubscription extends InspectCommands.Base {
    @Parameters(paramLabel = "NAME")
    String name;

    @Option(names = "--topic", required = true, description = "a topic it reads (repeat)")
    List<String> topics;

    @Option(names = "--start", description = "earliest, latest (default) or an ISO-8601 time")
    String start = "latest";

    @Override
    void run(Admin admin, Connection.Session session) {
      SubscriptionInfo s =
          admin.createSubscription(
              SubscriptionSpec.of(
                      name, topics.stream().map(TopicName::parse).toArray(TopicName[]::new))
                  .startAt(position("--start", start)));
      out().println("subscription " + s.name() + " on " + s.topics());
      out().flush();
    }
  }

  @Command(
      name = "delete",
      description = "Delete a subscription, a topic or an empty namespace.",
      subcommands = {DeleteSubscription.class, DeleteTopic.class, DeleteNamespace.class})
  static final class Delete {}

  @Command(
      name = "subscription",
      description =
          "Delete a subscription with its cursors, retries, dead letters and group state;"
              + " refused while consumers are live unless --force.",
      footer = {"%nExample:%n  boxline delete subscription old-reports --yes"})
  static final class DeleteSubscription extends InspectCommands.Base {
    @Parameters(paramLabel = "NAME")
    String name;

    @Option(names = "--force", description = "delete even while consumers are live")
    boolean force;

    @Option(
        names = {"-y", "--yes"},
        description = "do not ask for confirmation")
    boolean yes;

    @Override
    void run(Admin admin, Connection.Session session) {
      if (admin.subscription(name).isEmpty()) {
        out().println("no subscription " + name + ": nothing to delete");
        out().flush();
        return;
      }
      Confirm.orRefuse(
          yes, out(), "Delete subscription " + name + "?", "subscription " + name + " exists");
      boolean deleted = admin.deleteSubscription(name, force);
      out().println(deleted ? "deleted subscription " + name : "no subscription " + name);
      out().flush();
    }
  }

  @Command(
      name = "topic",
      description =
          "Delete a topic with its events and every subscription's state on it; refused"
              + " while subscriptions read it unless --force.",
      footer = {"%nExample:%n  boxline delete topic acme/billing/old --yes"})
  static final class DeleteTopic extends InspectCommands.Base {
    @Parameters(paramLabel = "TOPIC")
    String topic;

    @Option(names = "--force", description = "delete even while subscriptions read it")
    boolean force;

    @Option(
        names = {"-y", "--yes"},
        description = "do not ask for confirmation")
    boolean yes;

    @Override
    void run(Admin admin, Connection.Session session) {
      TopicName t = TopicName.parse(topic);
      if (admin.topic(t).isEmpty()) {
        out().println("no topic " + t + ": nothing to delete");
        out().flush();
        return;
      }
      long events = admin.topicState(t).heads().stream().mapToLong(Long::longValue).sum();
      Confirm.orRefuse(
          yes,
          out(),
          "Delete topic " + t + " and its " + events + " event(s)?",
          "topic " + t + " holds " + events + " event(s)");
      boolean deleted = admin.deleteTopic(t, force);
      out().println(deleted ? "deleted topic " + t : "no topic " + t);
      out().flush();
    }
  }

  @Command(name = "namespace", description = "Delete a namespace that holds nothing.")
  static final class DeleteNamespace extends InspectCommands.Base {
    @Parameters(paramLabel = "PATH")
    String path;

    @Override
    void run(Admin admin, Connection.Session session) {
      boolean deleted = admin.deleteNamespace(NamespacePath.of(path));
      out().println(deleted ? "deleted namespace " + path : "no namespace " + path);
      out().flush();
    }
  }

  @Command(
      name = "rewind",
      description =
          "Move every cursor of a subscription to earliest, latest or a time (replay);"
              + " its consumers must be stopped.",
      footer = {"%nExample:%n  boxline rewind billing --to 2026-11-25T08:00:00Z --yes"})
  static final class Rewind extends InspectCommands.Base {
    @Parameters(paramLabel = "SUBSCRIPTION")
    String subscription;

    @Option(names = "--to", required = true, description = "earliest, latest or an ISO-8601 time")
    String to;

    @Option(
        names = {"-y", "--yes"},
        description = "do not ask for confirmation")
    boolean yes;

    @Override
    void run(Admin admin, Connection.Session session) {
      StartPosition p = position("--to", to);
      Confirm.orRefuse(
          yes,
          out(),
          "Rewind every cursor of " + subscription + " to " + to + "?",
          "rewinding " + subscription + " moves its cursors");
      List<PartitionLag> after = admin.rewind(subscription, p);
      long backlog = after.stream().mapToLong(PartitionLag::backlog).sum();
      if (output.json()) {
        out().println(Output.json(Map.of("subscription", subscription, "backlog", backlog)));
      } else {
        out()
            .println(
                "rewound " + subscription + " to " + to + ": " + backlog + " event(s) to handle");
      }
      out().flush();
    }
  }

  @Command(
      name = "retention",
      description = "Set how long a topic keeps its events.",
      footer = {
        "%nExamples:",
        "  boxline retention acme/billing/invoices --max-age 7d",
        "  boxline retention acme/billing/invoices --max-events 1000000 --delete-unconsumed",
        "  boxline retention acme/billing/invoices --forever"
      })
  static final class Retention extends InspectCommands.Base {
    @Parameters(paramLabel = "TOPIC")
    String topic;

    @Option(
        names = "--max-age",
        paramLabel = "DURATION",
        description = "7d, 12h, 30m, 500ms or ISO-8601 (P7D)")
    Duration maxAge;

    @Option(names = "--max-events", description = "per partition")
    Long maxEvents;

    @Option(names = "--forever", description = "keep everything")
    boolean forever;

    @Option(
        names = "--delete-unconsumed",
        description = "also remove events some subscription has not handled yet")
    boolean deleteUnconsumed;

    @Override
    void run(Admin admin, Connection.Session session) {
      RetentionPolicy p;
      if (forever) {
        p = RetentionPolicy.forever();
      } else if (maxAge != null) {
        p = RetentionPolicy.byAge(maxAge);
        if (maxEvents != null) {
          p = p.maxEventsPerPartition(maxEvents);
        }
      } else if (maxEvents != null) {
        p = RetentionPolicy.bySize(maxEvents);
      } else {
        throw new CliException(
            ExitCodes.USAGE, "give --max-age, --max-events (or both), or --forever");
      }
      if (deleteUnconsumed) {
        p = p.deleteUnconsumed();
      }
      TopicName t = TopicName.parse(topic);
      admin.setRetention(t, p);
      out().println("retention of " + t + ": " + Output.retention(p));
      out().flush();
    }
  }

  @Command(
      name = "group-policy",
      description =
          "Show a subscription's group policy, or override fields of it (--clear removes"
              + " the override).",
      footer = {
        "%nExamples:",
        "  boxline group-policy billing",
        "  boxline group-policy billing --slack 0.2 --max-members 64"
      })
  static final class GroupPolicyCommand extends InspectCommands.Base {
    @Parameters(paramLabel = "SUBSCRIPTION")
    String subscription;

    @Option(names = "--check-in-rate", description = "check-ins per second of the whole group")
    Double checkInRate;

    @Option(names = "--slack", description = "how far a member may be from its share (0 to 1)")
    Double slack;

    @Option(names = "--max-members", description = "0 for no limit")
    Integer maxMembers;

    @Option(names = "--batch-size", description = "events per batch for every member")
    Integer batchSize;

    @Option(
        names = "--max-check-in-interval",
        paramLabel = "DURATION",
        description = "30s, 5m or ISO-8601 (PT30S)")
    Duration maxCheckInInterval;

    @Option(names = "--clear", description = "remove the override")
    boolean clear;

    @Override
    void run(Admin admin, Connection.Session session) {
      if (clear) {
        admin.setGroupPolicy(subscription, null);
      } else if (checkInRate != null
          || slack != null
          || maxMembers != null
          || batchSize != null
          || maxCheckInInterval != null) {
        GroupPolicy p = admin.groupPolicy(subscription);
        if (checkInRate != null) {
          p = p.withCheckInRate(checkInRate);
        }
        if (slack != null) {
          p = p.withSlack(slack);
        }
        if (maxMembers != null) {
          p = p.withMaxMembers(maxMembers);
        }
        if (batchSize != null) {
          p = p.withBatchSize(batchSize);
        }
        if (maxCheckInInterval != null) {
          p = p.withMaxCheckInInterval(maxCheckInInterval);
        }
        admin.setGroupPolicy(subscription, p);
      }
      GroupPolicy now = admin.groupPolicy(subscription);
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("checkInRate", now.checkInRate());
      m.put("minCheckInInterval", io.boxline.Names.durationText(now.minCheckInInterval()));
      m.put("maxCheckInInterval", io.boxline.Names.durationText(now.maxCheckInInterval()));
      m.put("deadlineMultiplier", now.deadlineMultiplier());
      m.put("slack", now.slack());
      m.put("releaseGrace", io.boxline.Names.durationText(now.releaseGrace()));
      m.put("idleRelease", io.boxline.Names.durationText(now.idleRelease()));
      m.put("batchSize", now.batchSize());
      m.put("maxMembers", now.maxMembers());
      if (output.json()) {
        out().println(Output.json(m));
      } else {
        Output.Table t = new Output.Table("SETTING", "VALUE");
        m.forEach(t::row);
        t.print(out());
      }
      out().flush();
    }
  }

  @Command(
      name = "migrate",
      description =
          "Create or upgrade Boxline's tables in the schema (what an application does at"
              + " start unless migrate(false)).")
  static final class Migrate extends InspectCommands.Base {
    @Override
    public Integer call() {
      if (connection.overServer()) {
        throw Connection.needsDatabase("'boxline migrate'");
      }
      Connection.Session s = connection.openForMigration();
      try (s) {
        s.boxline("'boxline migrate'").start();
      }
      out().println("schema is up to date");
      out().flush();
      return ExitCodes.OK;
    }

    @Override
    void run(Admin admin, Connection.Session session) {}
  }
}
