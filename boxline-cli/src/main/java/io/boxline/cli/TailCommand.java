package io.boxline.cli;

import io.boxline.Admin;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Prints a topic's events, every partition, without a subscription and without moving any cursor:
 * it reads the log as {@code Admin.events} does and keeps its positions in memory.
 */
@Command(
    name = "tail",
    description =
        "Print a topic's events from earliest, latest, a time or a position; -f follows"
            + " new ones. Reads the log only: no subscription, no cursor moves.",
    footer = {
      "%nExamples:",
      "  boxline tail acme/billing/invoices --from earliest --limit 20",
      "  boxline tail acme/billing/invoices -f --key order-42 -o json",
      "  boxline tail acme/billing/invoices --from 2026-11-25T09:00:00Z --type InvoiceSent",
      "  boxline tail acme/billing/invoices --from 3:120   (partition 3, after sequence 120)"
    })
final class TailCommand extends InspectCommands.Base {
  private static final int PAGE = 500;

  @Parameters(paramLabel = "TOPIC", description = "namespace/topic, e.g. acme/billing/invoices")
  String topic;

  @Option(
      names = "--from",
      paramLabel = "WHERE",
      description =
          "earliest, latest (default), an ISO-8601 time, or PARTITION:SEQUENCE (start"
              + " after it; the other partitions start at earliest)")
  String from = "latest";

  @Option(
      names = {"-f", "--follow"},
      description = "keep printing new events until Ctrl-C")
  boolean follow;

  @Option(names = "--key", description = "only events with this key")
  String key;

  @Option(names = "--type", description = "only events of this type")
  String type;

  @Option(names = "--limit", description = "stop after this many events")
  Long limit;

  @Option(
      names = "--poll",
      paramLabel = "MILLIS",
      description = "with -f: how often to look for new events (default 200)")
  long pollMillis = 200;

  @Override
  void run(Admin admin, Connection.Session session) throws InterruptedException {
    TopicName name = TopicName.parse(topic);
    TopicInfo info =
        admin
            .topic(name)
            .orElseThrow(
                () -> new io.boxline.NotFoundException("topic '" + name + "' does not exist"));
    int partitions = info.partitions();
    long[] after = new long[partitions];
    Instant since = null;
    if (from.equals("latest")) {
      List<Long> heads = admin.topicState(name).heads();
      for (int p = 0; p < partitions; p++) {
        after[p] = heads.get(p);
      }
    } else if (from.equals("earliest")) {
      // every partition from 0
    } else if (from.matches("\\d+:\\d+")) {
      int p = Integer.parseInt(from.substring(0, from.indexOf(':')));
      if (p >= partitions) {
        throw new CliException(
            ExitCodes.USAGE,
            "--from " + from + ": " + name + " has partitions 0 to " + (partitions - 1));
      }
      after[p] = Long.parseLong(from.substring(from.indexOf(':') + 1));
    } else {
      try {
        since = Instant.parse(from);
      } catch (DateTimeParseException e) {
        throw new CliException(
            ExitCodes.USAGE,
            "--from takes earliest, latest, an ISO-8601 time (2026-11-25T09:00:00Z) or"
                + " PARTITION:SEQUENCE, got '"
                + from
                + "'");
      }
    }
    if (follow) {
      spec.commandLine()
          .getErr()
          .println("following " + name + " from " + from + "; Ctrl-C to stop");
      spec.commandLine().getErr().flush();
    }
    long printed = 0;
    while (true) {
      boolean any = false;
      // One read of the heads, then only the partitions with something new (over a server: one
      // request per round plus one per such partition).
      List<Long> heads = admin.topicState(name).heads();
      for (int p = 0; p < partitions; p++) {
        if (heads.get(p) <= after[p]) {
          continue;
        }
        EventQuery q = EventQuery.of(name, p).after(after[p]).limit(PAGE);
        if (key != null) {
          q = q.key(key);
        }
        List<Event> page = admin.events(q);
        for (Event e : page) {
          after[p] = Math.max(after[p], e.sequence());
          if ((type != null && !type.equals(e.type()))
              || (since != null && e.createdAt().isBefore(since))) {
            continue;
          }
          out().println(output.json() ? Output.json(Output.event(e)) : Output.pretty(e));
          printed++;
          if (limit != null && printed >= limit) {
            out().flush();
            return;
          }
        }
        if (!page.isEmpty()) {
          any = true;
          after[p] = Math.max(after[p], page.get(page.size() - 1).sequence());
        }
        if (page.size() < PAGE) {
          // Every event up to the head read above was visible to the query: with --key, the
          // events of other keys up to it need not be read again.
          after[p] = Math.max(after[p], heads.get(p));
        }
      }
      out().flush();
      if (!any) {
        if (!follow) {
          return;
        }
        Thread.sleep(pollMillis);
      }
    }
  }
}
