package io.boxline.server.internal;

import io.boxline.Admin;
import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.Names;
import io.boxline.NamespacePath;
import io.boxline.PartitionLag;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.server.internal.Auth.Action;
import io.boxline.server.internal.Auth.Caller;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;

/**
 * The admin endpoints: namespaces, topics and their events, subscriptions and their groups, the
 * outbox; a subscription's failures, retries and dead letters are {@link FailuresApi}'s.
 */
final class AdminApi {
  private final Admin admin;
  private final KnownSubscriptions known;
  private final Clock clock;
  private final FailuresApi failures;
  private final ProgramHandlers handlers;

  AdminApi(Boxline boxline, KnownSubscriptions known, Clock clock, ProgramHandlers handlers) {
    this.handlers = handlers;
    this.admin = boxline.admin();
    this.known = known;
    this.clock = clock;
    this.failures = new FailuresApi(boxline);
  }

  void register(Router r) {
    r.add("GET", "/v1/whoami", this::whoami);
    r.add("GET", "/v1/namespaces", this::namespaces);
    r.add("POST", "/v1/namespaces", this::createNamespace);
    r.add("DELETE", "/v1/namespaces/{namespace}", this::deleteNamespace);
    r.add("GET", "/v1/topics", this::topics);
    r.add("POST", "/v1/topics", this::createTopic);
    r.add("GET", "/v1/topics/{topic}", this::topic);
    r.add("DELETE", "/v1/topics/{topic}", this::deleteTopic);
    r.add("PUT", "/v1/topics/{topic}/retention", this::setRetention);
    r.add("GET", "/v1/topics/{topic}/partitions/{partition}/events", this::events);
    r.add("GET", "/v1/topics/{topic}/partitions/{partition}/events/{sequence}", this::event);
    r.add("GET", "/v1/subscriptions", this::subscriptions);
    r.add("POST", "/v1/subscriptions", this::createSubscription);
    r.add("GET", "/v1/subscriptions/{subscription}", this::subscription);
    r.add("DELETE", "/v1/subscriptions/{subscription}", this::deleteSubscription);
    r.add("GET", "/v1/subscriptions/{subscription}/lag", this::lag);
    r.add("GET", "/v1/subscriptions/{subscription}/group", this::group);
    r.add("GET", "/v1/subscriptions/{subscription}/group-policy", this::groupPolicy);
    r.add("PUT", "/v1/subscriptions/{subscription}/group-policy", this::setGroupPolicy);
    r.add("DELETE", "/v1/subscriptions/{subscription}/group-policy", this::clearGroupPolicy);
    r.add("POST", "/v1/subscriptions/{subscription}/rewind", this::rewind);
    r.add("POST", "/v1/subscriptions/{subscription}/rename", this::rename);
    // Registered here so that the routes keep their order.
    failures.register(r);
    r.add("GET", "/v1/outbox", this::outbox);
    r.add("PUT", "/v1/group-policy", this::setDefaultGroupPolicy);
  }

  private void whoami(Call c) {
    c.json(200, new ApiBodies.Caller(c.caller.name, c.caller.role.name().toLowerCase(Locale.ROOT)));
  }

  private void namespaces(Call c) {
    c.caller.require(Action.READ);
    List<String> out = new ArrayList<>();
    for (NamespacePath ns : admin.namespaces()) {
      if (c.caller.covers(ns)) {
        out.add(ns.toString());
      }
    }
    c.json(200, new ApiBodies.Namespaces(out));
  }

  private void createNamespace(Call c) {
    var body = c.body(ApiRequests.NewNamespace.class);
    NamespacePath ns = Call.valid(() -> NamespacePath.of(required("name", body.name())));
    c.caller.require(Action.MANAGE, ns);
    admin.createNamespace(ns);
    c.json(201, new ApiBodies.Namespace(ns.toString()));
  }

  private void deleteNamespace(Call c) {
    NamespacePath ns = c.namespace();
    c.caller.require(Action.MANAGE, ns);
    c.json(200, new ApiBodies.Deleted(ns.toString(), admin.deleteNamespace(ns)));
  }

  private void topics(Call c) {
    c.caller.require(Action.READ);
    List<TopicInfo> visible = new ArrayList<>();
    for (TopicInfo t : admin.topics()) {
      if (c.caller.covers(t.name())) {
        visible.add(t);
      }
    }
    NamePage<TopicInfo> page = NamePage.of(c, visible, t -> t.name().toString());
    List<ApiBodies.Topic> out = new ArrayList<>();
    page.items().forEach(t -> out.add(Views.topic(t)));
    c.json(200, new ApiBodies.Topics(out, page.next()));
  }

  private void createTopic(Call c) {
    var body = c.body(ApiRequests.NewTopic.class);
    TopicName name = Call.valid(() -> TopicName.parse(required("name", body.name())));
    c.caller.require(Action.MANAGE, name);
    int partitions = body.partitions() == null ? 16 : body.partitions();
    String seq = body.sequencing() == null ? "sequencer" : body.sequencing();
    Sequencing sequencing;
    try {
      sequencing = Sequencing.valueOf(seq.toUpperCase(Locale.ROOT).replace('-', '_'));
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(
          "sequencing must be sequencer or in-transaction, got '" + seq + "'");
    }
    admin.createNamespace(name.namespace());
    c.json(201, Views.topic(admin.createTopic(name, partitions, sequencing)));
  }

  private void topic(Call c) {
    TopicName t = c.topic();
    c.caller.require(Action.READ, t);
    c.json(200, Views.topicState(admin.topicState(t)));
  }

  private void deleteTopic(Call c) {
    TopicName t = c.topic();
    c.caller.require(Action.MANAGE, t);
    c.json(200, new ApiBodies.Deleted(t.toString(), deleteTopic(t, c.boolQuery("force"))));
  }

  private void setRetention(Call c) {
    TopicName t = c.topic();
    c.caller.require(Action.MANAGE, t);
    admin.setRetention(t, c.body(ApiRequests.Retention.class).policy());
    c.json(200, Views.topicState(admin.topicState(t)));
  }

  private void events(Call c) {
    TopicName t = c.topic();
    requireReadEvents(c.caller, t);
    int partition = partition(c, t);
    String id = c.query("id").orElse(null);
    Optional<String> at = c.query("at");
    if (at.isPresent() && c.query("after").isPresent()) {
      throw ApiException.badRequest("give after (a sequence) or at (a time), not both");
    }
    long after =
        at.isPresent()
            ? TimeSeek.before(admin, t, partition, instant(at.get(), "at"))
            : c.longQuery("after", 0);
    EventQuery q =
        Call.valid(
            () ->
                new EventQuery(
                    t,
                    partition,
                    after,
                    c.query("key").orElse(null),
                    id == null ? null : uuid(id),
                    c.intQuery("limit", 100, 1, 1000)));
    List<Event> events = admin.events(q);
    List<ApiBodies.Event> out = new ArrayList<>();
    boolean raw = rawPayload(c);
    events.forEach(e -> out.add(Views.event(e, raw)));
    Long next = events.size() < q.limit() ? null : events.get(events.size() - 1).sequence();
    c.json(200, new ApiBodies.EventPage(out, next));
  }

  private void event(Call c) {
    TopicName t = c.topic();
    requireReadEvents(c.caller, t);
    int partition = partition(c, t);
    long seq;
    try {
      seq = Long.parseLong(c.param("sequence"));
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(
          "sequence must be a whole number, got '" + c.param("sequence") + "'");
    }
    Event e =
        admin
            .event(t, partition, seq)
            .orElseThrow(
                () ->
                    ApiException.notFound(
                        "no event at " + t + " partition " + partition + " sequence " + seq));
    c.json(200, Views.event(e, rawPayload(c)));
  }

  /** The {@code payload} query parameter ({@link Payloads#base64}). */
  static boolean rawPayload(Call c) {
    return Payloads.base64(c.query("payload").orElse(null));
  }

  static void requireReadEvents(Caller caller, TopicName t) {
    if (!caller.may(Action.READ)) {
      caller.require(Action.CONSUME, t);
    } else {
      caller.require(Action.READ, t);
    }
  }

  private int partition(Call c, TopicName t) {
    int p;
    try {
      p = Integer.parseInt(c.param("partition"));
    } catch (NumberFormatException e) {
      throw ApiException.badRequest(
          "partition must be a whole number, got '" + c.param("partition") + "'");
    }
    TopicInfo info =
        admin.topic(t).orElseThrow(() -> ApiException.notFound("topic " + t + " does not exist"));
    if (p < 0 || p >= info.partitions()) {
      throw ApiException.badRequest(
          "topic " + t + " has partitions 0 to " + (info.partitions() - 1) + "; got " + p);
    }
    return p;
  }

  private void subscriptions(Call c) {
    c.caller.require(Action.READ);
    List<SubscriptionInfo> visible = new ArrayList<>();
    for (SubscriptionInfo s : admin.subscriptions()) {
      if (c.caller.covers(s)) {
        visible.add(s);
      }
    }
    NamePage<SubscriptionInfo> page = NamePage.of(c, visible, SubscriptionInfo::name);
    List<ApiBodies.Subscription> out = new ArrayList<>();
    page.items().forEach(s -> out.add(Views.subscription(s)));
    c.json(200, new ApiBodies.Subscriptions(out, page.next()));
  }

  private void createSubscription(Call c) {
    var body = c.body(ApiRequests.NewSubscription.class);
    String name = required("name", body.name());
    if (body.topics() == null || body.topics().isEmpty()) {
      throw ApiException.badRequest(
          "topics must be a list of one or more topic names, e.g. [\"acme/orders\"]");
    }
    List<TopicName> topics = new ArrayList<>();
    for (String t : body.topics()) {
      if (t == null) {
        throw ApiException.badRequest("topics must hold topic names as strings");
      }
      topics.add(Call.valid(() -> TopicName.parse(t)));
    }
    Call.valid(() -> Names.requireSubscriptionName(name));
    c.caller.requireAll(Action.MANAGE, topics, "every topic of the subscription");
    requireNewName(c.caller, name);
    StartPosition start = start(body.start() == null ? "earliest" : body.start(), "start");
    SubscriptionSpec spec =
        Call.valid(
            () -> SubscriptionSpec.of(name, topics.toArray(TopicName[]::new)).startAt(start));
    c.json(201, Views.subscription(admin.createSubscription(spec)));
  }

  /**
   * The subscription of the path, after checking the caller may {@code action} on all its topics.
   */
  private SubscriptionInfo subscription(Call c, Action action) {
    return subscription(admin, c, action);
  }

  /**
   * The subscription of the path, after checking that the caller may {@code action} on every one of
   * its topics (ConsumeApi asks the same).
   */
  static SubscriptionInfo subscription(Admin admin, Call c, Action action) {
    c.caller.require(action);
    return visibleSubscription(admin, c.caller, c.param("subscription"));
  }

  /**
   * The named subscription when the caller may see it; else the same answer whether it exists or
   * not (403 for a token of some namespaces, 404 for one of all). A name in a namespace the caller
   * does not cover is refused before anything is read.
   */
  static SubscriptionInfo visibleSubscription(Admin admin, Caller caller, String name) {
    return visibleSubscription(admin::subscription, caller, name);
  }

  /** {@link #visibleSubscription(Admin, Caller, String)} with the lookup given. */
  static SubscriptionInfo visibleSubscription(
      java.util.function.Function<String, Optional<SubscriptionInfo>> lookup,
      Caller caller,
      String name) {
    Call.valid(() -> Names.requireSubscriptionName(name));
    if (!caller.coversSubscriptionName(name)) {
      throw caller.hiddenSubscription(name);
    }
    Optional<SubscriptionInfo> found = lookup.apply(name);
    if (found.isEmpty() || !caller.covers(found.get())) {
      throw caller.hiddenSubscription(name);
    }
    return found.get();
  }

  private void subscription(Call c) {
    SubscriptionInfo s = subscription(c, Action.READ);
    ApiBodies.SubscriptionDetail out =
        new ApiBodies.SubscriptionDetail(
            Views.subscription(s),
            Views.policy(admin.groupPolicy(s.name())),
            Views.failures(admin.failures(s.name())),
            handlers.view(s.name()).orElse(null));
    c.json(200, out);
  }

  private void deleteSubscription(Call c) {
    c.caller.require(Action.MANAGE);
    String name = c.param("subscription");
    if (!c.caller.allAccess()) {
      visibleSubscription(admin, c.caller, name);
    }
    boolean deleted;
    try {
      deleted = admin.deleteSubscription(name, c.boolQuery("force"));
    } finally {
      known.forget(name); // before the answer: the caller's next request must not find it
    }
    c.json(200, new ApiBodies.Deleted(name, deleted));
  }

  private boolean deleteTopic(TopicName t, boolean force) {
    try {
      return admin.deleteTopic(t, force);
    } finally {
      known.forgetAll();
    }
  }

  private void lag(Call c) {
    SubscriptionInfo s = subscription(c, Action.READ);
    Instant now = clock.instant();
    List<ApiBodies.Lag> out = new ArrayList<>();
    long total = 0;
    double oldest = 0;
    for (PartitionLag l : admin.lag(s.name())) {
      ApiBodies.Lag v = Views.lag(l, now);
      total += l.backlog();
      oldest = Math.max(oldest, v.lagSeconds());
      out.add(v);
    }
    c.json(200, new ApiBodies.SubscriptionLag(s.name(), total, oldest, out));
  }

  private void group(Call c) {
    SubscriptionInfo s = subscription(c, Action.READ);
    c.json(200, Views.group(admin.group(s.name())));
  }

  private void groupPolicy(Call c) {
    SubscriptionInfo s = subscription(c, Action.READ);
    c.json(200, Views.policy(admin.groupPolicy(s.name())));
  }

  private void setGroupPolicy(Call c) {
    SubscriptionInfo s = subscription(c, Action.MANAGE);
    admin.setGroupPolicy(s.name(), c.body(ApiRequests.GroupPolicyBody.class).policy());
    c.json(200, Views.policy(admin.groupPolicy(s.name())));
  }

  private void clearGroupPolicy(Call c) {
    SubscriptionInfo s = subscription(c, Action.MANAGE);
    admin.setGroupPolicy(s.name(), null);
    c.json(200, Views.policy(admin.groupPolicy(s.name())));
  }

  private void setDefaultGroupPolicy(Call c) {
    c.caller.requireCluster(Action.MANAGE);
    var policy = c.body(ApiRequests.GroupPolicyBody.class).policy();
    admin.setDefaultGroupPolicy(policy);
    c.json(200, Views.policy(policy));
  }

  /**
   * Moves a subscription to a new name (a plain-named one into the caller's namespace): the caller
   * must be allowed to change it and to create a subscription of that name.
   */
  private void rename(Call c) {
    SubscriptionInfo s = subscription(c, Action.MANAGE);
    String to = required("to", c.body(ApiRequests.Target.class).to());
    requireNewName(c.caller, to);
    SubscriptionInfo renamed;
    try {
      renamed = admin.renameSubscription(s.name(), to);
    } finally {
      known.forget(s.name()); // before the answer, as for a delete
      known.forget(to);
    }
    c.json(200, Views.subscription(renamed));
  }

  /** What a token may name a subscription it creates or renames: its namespaces only. */
  private static void requireNewName(Caller caller, String name) {
    Call.valid(() -> Names.requireSubscriptionName(name));
    if (!caller.coversSubscriptionName(name)) {
      throw caller.outOfScope("subscription '" + name + "'");
    }
    if (!caller.allAccess() && Names.subscriptionNamespace(name) == null) {
      throw ApiException.badRequest(
          "a token limited to namespaces names its subscriptions <namespace>/<name>, e.g. '"
              + caller.examplePrefix()
              + "/"
              + Problems.quote(name)
              + "', so that other tenants can use the same name");
    }
  }

  private void rewind(Call c) {
    SubscriptionInfo s = subscription(c, Action.MANAGE);
    StartPosition to = start(required("to", c.body(ApiRequests.Target.class).to()), "to");
    Instant now = clock.instant();
    List<ApiBodies.Lag> out = new ArrayList<>();
    for (PartitionLag l : admin.rewind(s.name(), to)) {
      out.add(Views.lag(l, now));
    }
    c.json(200, new ApiBodies.Rewound(s.name(), out));
  }

  private void outbox(Call c) {
    c.caller.requireCluster(Action.READ);
    var b = admin.outboxBacklog();
    c.json(
        200,
        new ApiBodies.Outbox(
            b.events(),
            Views.time(b.oldestCreatedAt()),
            b.age(clock.instant()).toMillis() / 1000.0));
  }

  static StartPosition start(String s, String field) {
    try {
      return ConfigReader.startPosition(s);
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest(
          field
              + " must be earliest, latest or an ISO-8601 time such as 2026-01-31T12:00:00Z; got '"
              + s
              + "'");
    }
  }

  /** A field the body must have; 400 naming it when it is missing or null. */
  static <T> T required(String field, T value) {
    if (value == null) {
      throw ApiException.badRequest("the body needs \"" + field + "\"");
    }
    return value;
  }

  static UUID uuid(String s) {
    try {
      return UUID.fromString(s);
    } catch (IllegalArgumentException e) {
      throw ApiException.badRequest("'" + s + "' is not an event id (a UUID)");
    }
  }

  static Instant instant(String s, String field) {
    try {
      Instant t = Instant.parse(s);
      return Call.valid(() -> Names.requireStorable(field, t));
    } catch (DateTimeParseException e) {
      throw ApiException.badRequest(
          field + " must be an ISO-8601 time such as 2026-01-31T12:00:00Z; got '" + s + "'");
    }
  }
}
