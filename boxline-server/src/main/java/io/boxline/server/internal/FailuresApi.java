package io.boxline.server.internal;

import static io.boxline.server.internal.AdminApi.instant;
import static io.boxline.server.internal.AdminApi.rawPayload;
import static io.boxline.server.internal.AdminApi.subscription;
import static io.boxline.server.internal.AdminApi.uuid;

import io.boxline.Admin;
import io.boxline.Boxline;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.EventPosition;
import io.boxline.FailureCounts;
import io.boxline.RetryingEvent;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicName;
import io.boxline.server.internal.Auth.Action;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The admin endpoints for events that failed: failure counts, events waiting for a retry, dead
 * letters and their redrive or discard (over {@link io.boxline.DeadLetters}). Apart from {@link
 * AdminApi} because they form one resource with its own filters and paging.
 */
final class FailuresApi {
  private final Boxline boxline;
  private final Admin admin;

  FailuresApi(Boxline boxline) {
    this.boxline = boxline;
    this.admin = boxline.admin();
  }

  void register(Router r) {
    r.add("GET", "/v1/subscriptions/{subscription}/failures", this::subscriptionFailures);
    r.add("GET", "/v1/subscriptions/{subscription}/retries", this::retries);
    r.add("GET", "/v1/subscriptions/{subscription}/dead-letters", this::deadLetters);
    r.add("GET", "/v1/subscriptions/{subscription}/dead-letters/reasons", this::deadLetterReasons);
    r.add(
        "POST",
        "/v1/subscriptions/{subscription}/dead-letters/redrive",
        c -> redriveOrDiscard(c, true));
    r.add(
        "POST",
        "/v1/subscriptions/{subscription}/dead-letters/discard",
        c -> redriveOrDiscard(c, false));
    r.add("GET", "/v1/failures", this::failures);
  }

  private void subscriptionFailures(Call c) {
    SubscriptionInfo s = subscription(admin, c, Action.READ);
    c.json(
        200,
        new ApiBodies.SubscriptionFailures(
            Views.failures(admin.failures(s.name())), admin.inboxSize(s.name())));
  }

  private void retries(Call c) {
    SubscriptionInfo s = subscription(admin, c, Action.READ);
    List<ApiBodies.Retrying> out = new ArrayList<>();
    EventPosition after = position(c.query.get("after"));
    for (RetryingEvent r :
        Call.valid(() -> admin.retrying(s.name(), after, c.intQuery("limit", 100, 1, 10_000)))) {
      out.add(Views.retrying(r, rawPayload(c)));
    }
    c.json(200, new ApiBodies.RetryList(out));
  }

  private void deadLetters(Call c) {
    SubscriptionInfo s = subscription(admin, c, Action.READ);
    DeadLetterQuery q =
        deadLetterQuery(s.name(), queryFilter(c.query), c.intQuery("limit", 100, 1, 10_000));
    boolean raw = rawPayload(c);
    List<ApiBodies.DeadLetter> out = new ArrayList<>();
    for (DeadLetter d : boxline.deadLetters().list(q)) {
      out.add(Views.deadLetter(d, raw));
    }
    c.json(200, new ApiBodies.DeadLetterList(out));
  }

  private void deadLetterReasons(Call c) {
    SubscriptionInfo s = subscription(admin, c, Action.READ);
    List<ApiBodies.DeadLetterReason> out = new ArrayList<>();
    for (io.boxline.DeadLetterReason r :
        boxline.deadLetters().reasons(s.name(), c.intQuery("limit", 100, 1, 1000))) {
      out.add(
          new ApiBodies.DeadLetterReason(
              r.reason(), r.count(), Views.time(r.firstDeadAt()), Views.time(r.lastDeadAt())));
    }
    c.json(200, new ApiBodies.DeadLetterReasons(s.name(), out));
  }

  /**
   * Redrives (in order per key) or discards the dead letters the body's filters select; with {@code
   * "dryRun": true} only counts them, so a person can confirm first.
   */
  private void redriveOrDiscard(Call c, boolean redrive) {
    SubscriptionInfo s = subscription(admin, c, Action.REDRIVE);
    ApiRequests.DeadLetterFilter body = c.bodyOrEmpty(ApiRequests.DeadLetterFilter.class);
    int limit = body.limit() == null ? 100_000 : body.limit();
    DeadLetterQuery q = deadLetterQuery(s.name(), body, limit);
    boolean dryRun = Boolean.TRUE.equals(body.dryRun());
    int n;
    boolean more;
    if (dryRun) {
      List<DeadLetter> selected = boxline.deadLetters().list(q);
      n = selected.size();
      more =
          n == limit
              && !boxline
                  .deadLetters()
                  .list(q.after(EventPosition.of(selected.get(n - 1).event())).limit(1))
                  .isEmpty();
    } else {
      n = redrive ? boxline.deadLetters().redrive(q) : boxline.deadLetters().discard(q);
      // What was done left the dead letters; any that still match were past the limit.
      more = n == limit && !boxline.deadLetters().list(q.limit(1)).isEmpty();
    }
    c.json(
        200,
        new ApiBodies.DeadLetterAction(
            s.name(), redrive ? "redrive" : "discard", dryRun, n, limit, more));
  }

  private static final Set<String> QUERY_FILTERS =
      Set.of(
          "topic",
          "type",
          "key",
          "eventId",
          "error",
          "deadBefore",
          "deadAfter",
          "after",
          "limit",
          "payload");

  /** The filters of a dead-letter listing's query (limit and payload are read apart). */
  private static ApiRequests.DeadLetterFilter queryFilter(Map<String, String> q) {
    for (String k : q.keySet()) {
      if (!QUERY_FILTERS.contains(k)) {
        String near = ConfigNames.nearest(k, QUERY_FILTERS);
        throw ApiException.badRequest(
            "unknown filter '"
                + Problems.quote(k)
                + "'"
                + (near == null ? "" : "; did you mean '" + near + "'?")
                + " Filters are "
                + new TreeSet<>(QUERY_FILTERS));
      }
    }
    return new ApiRequests.DeadLetterFilter(
        q.get("topic"),
        q.get("type"),
        q.get("key"),
        q.get("eventId"),
        q.get("error"),
        q.get("deadBefore"),
        q.get("deadAfter"),
        q.get("after"),
        null,
        null);
  }

  private static DeadLetterQuery deadLetterQuery(
      String subscription, ApiRequests.DeadLetterFilter f, int limit) {
    return Call.valid(
        () ->
            new DeadLetterQuery(
                subscription,
                f.topic() == null ? null : TopicName.parse(f.topic()),
                blankToNull(f.type()),
                blankToNull(f.key()),
                f.eventId() == null ? null : uuid(f.eventId()),
                blankToNull(f.error()),
                f.deadBefore() == null ? null : instant(f.deadBefore(), "deadBefore"),
                f.deadAfter() == null ? null : instant(f.deadAfter(), "deadAfter"),
                position(f.after()),
                limit));
  }

  /** A page's "after" position, or null when not given. */
  private static EventPosition position(String text) {
    return text == null || text.isBlank() ? null : Call.valid(() -> EventPosition.parse(text));
  }

  private void failures(Call c) {
    c.caller.require(Action.READ);
    Map<String, SubscriptionInfo> visible = new HashMap<>();
    for (SubscriptionInfo s : admin.subscriptions()) {
      if (c.caller.covers(s)) {
        visible.put(s.name(), s);
      }
    }
    List<ApiBodies.Failures> out = new ArrayList<>();
    for (FailureCounts f : admin.failures()) {
      if (visible.containsKey(f.subscription())) {
        out.add(Views.failures(f));
      }
    }
    c.json(200, new ApiBodies.FailureList(out));
  }

  private static String blankToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }
}
