package io.boxline.server.internal;

import io.boxline.Admin;
import io.boxline.FailureCounts;
import io.boxline.GroupState;
import io.boxline.PartitionLag;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.TopicState;
import io.boxline.server.internal.Auth.Action;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code GET /v1/overview}: a page of the topics the caller may read (by name, {@code
 * ?limit=&after=}) and the subscriptions of those topics, with the counters a dashboard samples
 * (heads, handled positions, lag, failures, members), and totals over everything the caller may
 * read: one read per topic of the page, {@code Admin.group} per subscription of the page, one for
 * all failures. Rates are the client's to compute from two samples: the counters only grow.
 */
final class OverviewApi {
  /** A subscription whose oldest unhandled event is older than this is lagging. */
  static final Duration LAGGING_AFTER = Duration.ofSeconds(60);

  private final Admin admin;
  private final Clock clock;

  OverviewApi(Admin admin, Clock clock) {
    this.admin = admin;
    this.clock = clock;
  }

  void register(Router r) {
    r.add("GET", "/v1/overview", this::overview);
  }

  private void overview(Call c) {
    c.caller.require(Action.READ);
    Instant now = clock.instant();
    List<TopicInfo> visibleTopics = new ArrayList<>();
    for (TopicInfo t : admin.topics()) {
      if (c.caller.covers(t.name())) {
        visibleTopics.add(t);
      }
    }
    NamePage<TopicInfo> page = NamePage.of(c, visibleTopics, t -> t.name().toString());
    Set<TopicName> onPage = new HashSet<>();
    List<ApiBodies.OverviewTopic> topics = new ArrayList<>();
    for (TopicInfo t : page.items()) {
      onPage.add(t.name());
      TopicState s = admin.topicState(t.name());
      topics.add(
          new ApiBodies.OverviewTopic(Views.topic(t), s.events(), t.name().namespace().toString()));
    }
    Map<String, FailureCounts> failures = new HashMap<>();
    admin.failures().forEach(f -> failures.put(f.subscription(), f));
    List<ApiBodies.OverviewSubscription> subscriptions = new ArrayList<>();
    int visibleSubscriptions = 0;
    long retrying = 0;
    long deadLetters = 0;
    for (SubscriptionInfo s : admin.subscriptions()) {
      if (!c.caller.covers(s)) {
        continue;
      }
      visibleSubscriptions++;
      FailureCounts counts = failures.get(s.name());
      if (counts != null) {
        retrying += counts.retrying();
        deadLetters += counts.deadLetters();
      }
      if (s.topics().stream().noneMatch(onPage::contains)) {
        continue; // another page's: its group is not read for this one
      }
      GroupState g = admin.group(s.name());
      long lag = 0;
      long handled = 0;
      double lagSeconds = 0;
      for (GroupState.Partition p : g.partitions()) {
        PartitionLag l = p.lag();
        lag += l.backlog();
        handled += l.position();
        Duration age = l.age(now);
        if (age != null) {
          lagSeconds = Math.max(lagSeconds, age.toMillis() / 1000.0);
        }
      }
      FailureCounts f = failures.getOrDefault(s.name(), new FailureCounts(s.name(), 0, 0, 0));
      subscriptions.add(
          new ApiBodies.OverviewSubscription(
              Views.subscription(s),
              lag,
              lagSeconds,
              handled,
              f.retrying(),
              f.waiting(),
              f.deadLetters(),
              g.members().size(),
              health(lag, lagSeconds, f, g.members().size())));
    }
    ApiBodies.OutboxBacklog outbox = null;
    if (c.caller.allAccess()) {
      var b = admin.outboxBacklog();
      outbox = new ApiBodies.OutboxBacklog(b.events(), b.age(now).toMillis() / 1000.0);
    }
    c.json(
        200,
        new ApiBodies.Overview(
            Views.time(now),
            topics,
            subscriptions,
            outbox,
            new ApiBodies.OverviewTotals(
                visibleTopics.size(), visibleSubscriptions, retrying, deadLetters),
            page.next()));
  }

  /**
   * critical: events wait and nobody consumes them; warn: dead letters, retries or an oldest
   * unhandled event past {@link #LAGGING_AFTER}; else ok. The reasons say which.
   */
  static ApiBodies.Health health(long lag, double lagSeconds, FailureCounts f, int members) {
    List<String> reasons = new ArrayList<>();
    String status = "ok";
    if (lag > 0 && members == 0) {
      status = "critical";
      reasons.add(lag + " events wait and no member consumes them");
    }
    if (lagSeconds > LAGGING_AFTER.toSeconds()) {
      status = status.equals("ok") ? "warn" : status;
      reasons.add(
          String.format(java.util.Locale.ROOT, "oldest unhandled event %.0f s old", lagSeconds));
    }
    if (f.deadLetters() > 0) {
      status = status.equals("ok") ? "warn" : status;
      reasons.add(f.deadLetters() + " dead letters");
    }
    if (f.retrying() > 0) {
      status = status.equals("ok") ? "warn" : status;
      reasons.add(f.retrying() + " events retrying");
    }
    return new ApiBodies.Health(status, reasons);
  }
}
