package io.boxline.client.internal;

import static io.boxline.client.internal.HttpTransport.of;
import static io.boxline.client.internal.HttpTransport.query;
import static io.boxline.client.internal.HttpTransport.segment;

import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.Admin;
import io.boxline.Event;
import io.boxline.EventPosition;
import io.boxline.EventQuery;
import io.boxline.FailureCounts;
import io.boxline.GroupPolicy;
import io.boxline.GroupState;
import io.boxline.NamespacePath;
import io.boxline.OutboxBacklog;
import io.boxline.PartitionLag;
import io.boxline.RetentionPolicy;
import io.boxline.RetryingEvent;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionInfo;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.TopicState;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link Admin} over a Boxline server's admin API: each call is one request (a few page through),
 * and the answer is read back into the same records the library returns. What the server does not
 * offer ({@link #blockedTasks}, {@link #inboxSizes}) throws {@link UnsupportedOperationException}
 * saying it needs a database connection. Lists show what the token's namespaces cover, as the
 * server filters them.
 */
final class HttpAdmin implements Admin {
  /** The most events the server returns per page of a partition. */
  static final int EVENTS_PAGE = 1000;

  /** The most retries or dead letters the server returns per page. */
  static final int LIST_PAGE = 10_000;

  private final HttpTransport server;

  HttpAdmin(HttpTransport server) {
    this.server = server;
  }

  static String topicPath(TopicName t) {
    return "/v1/topics/" + segment(t.toString());
  }

  static String subscriptionPath(String s) {
    return "/v1/subscriptions/" + segment(s);
  }

  /** The refusal for what only a database connection offers. */
  static UnsupportedOperationException needsDatabase(String what) {
    return new UnsupportedOperationException(
        what + " needs a database connection: a Boxline server does not offer it over HTTP");
  }

  @Override
  public void createNamespace(NamespacePath namespace) {
    server.post("/v1/namespaces", of("name", namespace.toString()));
  }

  @Override
  public TopicInfo createTopic(TopicName topic, int partitions, Sequencing sequencing) {
    return Views.topic(
        server.post(
            "/v1/topics",
            of(
                "name",
                topic.toString(),
                "partitions",
                partitions,
                "sequencing",
                Views.sequencing(sequencing))));
  }

  @Override
  public Optional<TopicInfo> topic(TopicName topic) {
    JsonNode n = server.getOrNull(topicPath(topic));
    return n == null ? Optional.empty() : Optional.of(Views.topic(n));
  }

  @Override
  public List<TopicInfo> topics() {
    return all("/v1/topics", "topics", Views::topic);
  }

  @Override
  public TopicState topicState(TopicName topic) {
    return Views.topicState(server.get(topicPath(topic)));
  }

  @Override
  public SubscriptionInfo createSubscription(SubscriptionSpec spec) {
    List<String> topics = new ArrayList<>();
    spec.topics().forEach(t -> topics.add(t.toString()));
    return Views.subscription(
        server.post(
            "/v1/subscriptions",
            of("name", spec.name(), "topics", topics, "start", Views.start(spec.start()))));
  }

  @Override
  public Optional<SubscriptionInfo> subscription(String name) {
    JsonNode n = server.getOrNull(subscriptionPath(name));
    return n == null ? Optional.empty() : Optional.of(Views.subscription(n));
  }

  @Override
  public GroupState group(String subscription) {
    return Views.group(server.get(subscriptionPath(subscription) + "/group"));
  }

  @Override
  public List<NamespacePath> namespaces() {
    return Views.list(
        server.get("/v1/namespaces").get("namespaces"), n -> NamespacePath.of(n.asText()));
  }

  @Override
  public List<SubscriptionInfo> subscriptions() {
    return all("/v1/subscriptions", "subscriptions", Views::subscription);
  }

  /** Every item of a list the server pages by name, page after page. */
  private <T> List<T> all(
      String path, String field, java.util.function.Function<JsonNode, T> view) {
    List<T> out = new ArrayList<>();
    String after = null;
    do {
      Map<String, Object> params = new LinkedHashMap<>();
      params.put("limit", 1000);
      if (after != null) {
        params.put("after", after);
      }
      JsonNode page = server.get(path + query(params));
      out.addAll(Views.list(page.get(field), view));
      JsonNode next = page.get("next");
      after = next == null || next.isNull() ? null : next.asText();
    } while (after != null);
    return out;
  }

  /**
   * Pages of at most {@value #EVENTS_PAGE} until the query's limit or the end of the partition,
   * each event with its stored bytes ({@code payload=base64}: a JSON payload as it was sent, not
   * parsed and written again).
   */
  @Override
  public List<Event> events(EventQuery q) {
    List<Event> out = new ArrayList<>();
    long after = q.afterSequence();
    while (out.size() < q.limit()) {
      int want = Math.min(EVENTS_PAGE, q.limit() - out.size());
      JsonNode page =
          server.get(
              topicPath(q.topic())
                  + "/partitions/"
                  + q.partition()
                  + "/events"
                  + query(
                      of(
                          "after",
                          after,
                          "key",
                          q.key(),
                          "id",
                          q.eventId(),
                          "limit",
                          want,
                          "payload",
                          "base64")));
      List<Event> events = Views.list(page.get("events"), Views::event);
      out.addAll(events);
      if (events.size() < want || q.eventId() != null) {
        break;
      }
      after = events.get(events.size() - 1).sequence();
    }
    return out;
  }

  @Override
  public Optional<Event> event(TopicName topic, int partition, long sequence) {
    JsonNode n =
        server.getOrNull(
            topicPath(topic)
                + "/partitions/"
                + partition
                + "/events/"
                + sequence
                + "?payload=base64");
    return n == null ? Optional.empty() : Optional.of(Views.event(n));
  }

  @Override
  public List<FailureCounts> failures() {
    return Views.list(server.get("/v1/failures").get("failures"), Views::failures);
  }

  @Override
  public List<RetryingEvent> retrying(String subscription, EventPosition after, int limit) {
    List<RetryingEvent> out = new ArrayList<>();
    EventPosition from = after;
    while (out.size() < limit) {
      int want = Math.min(LIST_PAGE, limit - out.size());
      List<RetryingEvent> page =
          Views.list(
              server
                  .get(
                      subscriptionPath(subscription)
                          + "/retries"
                          + query(
                              of(
                                  "after",
                                  from == null ? null : from.toString(),
                                  "limit",
                                  want,
                                  "payload",
                                  "base64")))
                  .get("retries"),
              Views::retrying);
      out.addAll(page);
      if (page.size() < want) {
        break;
      }
      from = EventPosition.of(page.get(page.size() - 1).event());
    }
    return out;
  }

  @Override
  public long blockedTasks() {
    throw needsDatabase("the count of blocked tasks");
  }

  @Override
  public FailureCounts failures(String subscription) {
    return Views.failures(server.get(subscriptionPath(subscription) + "/failures"));
  }

  @Override
  public long inboxSize(String subscription) {
    return server.get(subscriptionPath(subscription) + "/failures").path("inbox").asLong();
  }

  @Override
  public Map<String, Long> inboxSizes() {
    throw needsDatabase("the inbox sizes of every subscription");
  }

  @Override
  public boolean deleteSubscription(String subscription, boolean force) {
    return server
        .delete(subscriptionPath(subscription) + query(of("force", force ? "true" : null)))
        .path("deleted")
        .asBoolean();
  }

  @Override
  public SubscriptionInfo renameSubscription(String from, String to) {
    return Views.subscription(server.post(subscriptionPath(from) + "/rename", of("to", to)));
  }

  @Override
  public boolean deleteTopic(TopicName topic, boolean force) {
    return server
        .delete(topicPath(topic) + query(of("force", force ? "true" : null)))
        .path("deleted")
        .asBoolean();
  }

  @Override
  public boolean deleteNamespace(NamespacePath namespace) {
    return server
        .delete("/v1/namespaces/" + segment(namespace.toString()))
        .path("deleted")
        .asBoolean();
  }

  @Override
  public List<PartitionLag> rewind(String subscription, StartPosition to) {
    return Views.list(
        server
            .post(subscriptionPath(subscription) + "/rewind", of("to", Views.start(to)))
            .get("partitions"),
        Views::lag);
  }

  @Override
  public List<PartitionLag> lag(String subscription) {
    return Views.list(
        server.get(subscriptionPath(subscription) + "/lag").get("partitions"), Views::lag);
  }

  /** One request per subscription the token sees (the server has no route for all at once). */
  @Override
  public Map<String, List<PartitionLag>> lagBySubscription() {
    Map<String, List<PartitionLag>> out = new LinkedHashMap<>();
    for (SubscriptionInfo s : subscriptions()) {
      out.put(s.name(), lag(s.name()));
    }
    return out;
  }

  /** Needs a token for every namespace ({@code "*"}); others get 403. */
  @Override
  public OutboxBacklog outboxBacklog() {
    JsonNode n = server.get("/v1/outbox");
    return new OutboxBacklog(n.path("events").asLong(), Views.time(n, "oldestCreatedAt"));
  }

  @Override
  public void setRetention(TopicName topic, RetentionPolicy policy) {
    server.put(topicPath(topic) + "/retention", Views.retention(policy));
  }

  @Override
  public GroupPolicy groupPolicy(String subscription) {
    return Views.policy(server.get(subscriptionPath(subscription) + "/group-policy"));
  }

  @Override
  public void setDefaultGroupPolicy(GroupPolicy policy) {
    server.put("/v1/group-policy", Views.policy(policy));
  }

  @Override
  public void setGroupPolicy(String subscription, GroupPolicy policy) {
    String path = subscriptionPath(subscription) + "/group-policy";
    if (policy == null) {
      server.delete(path);
    } else {
      server.put(path, Views.policy(policy));
    }
  }
}
