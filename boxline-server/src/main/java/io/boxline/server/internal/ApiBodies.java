package io.boxline.server.internal;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.util.RawValue;
import java.util.List;
import java.util.Map;

/**
 * The HTTP API's answer bodies as records: a record's components are its JSON fields, in order
 * (their names are part of the API and of {@code openapi.json}, against which the tests check every
 * answer). {@link Views} builds them from Boxline's types. Times are ISO-8601 strings, durations
 * ISO-8601 durations.
 */
final class ApiBodies {
  private ApiBodies() {}

  record Topic(String name, int partitions, String sequencing, String createdAt) {}

  record Retention(
      String maxAge, boolean keepUnconsumed, long maxEventsPerPartition, String abandonAfter) {}

  record TopicState(
      @JsonUnwrapped Topic topic, Retention retention, List<Long> heads, long events) {}

  record Subscription(
      String name, List<String> topics, String start, String createdAt, String lastActive) {}

  record SubscriptionDetail(
      @JsonUnwrapped Subscription subscription,
      Policy groupPolicy,
      Failures failures,
      @JsonInclude(JsonInclude.Include.NON_NULL) Handler handler) {}

  /** The program this server runs as the subscription's consumer (its config's {@code handler}). */
  record Handler(String command, boolean perEvent, List<HandlerProcess> processes) {}

  /** One member of a handler: its program's state and counts since the server started. */
  record HandlerProcess(
      String member,
      String state,
      Long pid,
      int partitions,
      long starts,
      long crashes,
      long ok,
      long retried,
      long dead,
      long invalid,
      String lastProblem,
      String lastProblemAt,
      String restartAt) {}

  record Lag(
      String topic,
      int partition,
      long head,
      long cursor,
      long lag,
      double lagSeconds,
      String oldestUnhandledAt) {}

  record SubscriptionLag(String subscription, long lag, double lagSeconds, List<Lag> partitions) {}

  record Policy(
      double checkInRate,
      String minCheckInInterval,
      double deadlineMultiplier,
      double slack,
      String releaseGrace,
      String idleRelease,
      int batchSize,
      String maxCheckInInterval,
      int maxMembers) {}

  record InFlightCall(
      String topic,
      int partition,
      long fromSequence,
      long toSequence,
      int events,
      String startedAt) {}

  record GroupMember(
      String id,
      double weight,
      String lastCheckIn,
      String deadline,
      int leases,
      String host,
      String process,
      List<InFlightCall> inFlight) {}

  record GroupPartition(
      @JsonUnwrapped Lag lag, String owner, long epoch, String status, String since) {}

  record Group(
      String subscription,
      Policy policy,
      List<GroupMember> members,
      List<GroupPartition> partitions,
      String readAt) {}

  /**
   * An event: a JSON payload is inlined as stored ({@code payload}), any other is base64 ({@code
   * payloadBase64}); at most one of the two is present (neither for an event without payload
   * bytes).
   */
  record Event(
      String id,
      String topic,
      int partition,
      long sequence,
      String key,
      String type,
      String source,
      String contentType,
      Map<String, String> headers,
      String createdAt,
      String deliverAt,
      @JsonInclude(JsonInclude.Include.NON_NULL) RawValue payload,
      @JsonInclude(JsonInclude.Include.NON_NULL) String payloadBase64) {}

  record Retrying(
      String subscription,
      Event event,
      boolean behindItsKey,
      int attempts,
      String nextAttemptAt,
      String lastError,
      String firstFailedAt) {}

  record DeadLetter(
      String subscription,
      Event event,
      int attempts,
      String lastError,
      String firstFailedAt,
      String deadAt) {}

  record Failures(String subscription, long retrying, long waiting, long deadLetters) {}

  record SubscriptionFailures(@JsonUnwrapped Failures failures, long inbox) {}

  record Health(String status, List<String> reasons) {}

  record OverviewTopic(@JsonUnwrapped Topic topic, long events, String namespace) {}

  record OverviewSubscription(
      @JsonUnwrapped Subscription subscription,
      long lag,
      double lagSeconds,
      long handled,
      long retrying,
      long waiting,
      long deadLetters,
      int members,
      Health health) {}

  record OutboxBacklog(long events, double ageSeconds) {}

  /**
   * A page of the overview: topics by name and the subscriptions of those topics; {@code totals}
   * count everything the caller may read; {@code next} is the {@code after} of the next page.
   */
  record Overview(
      String readAt,
      List<OverviewTopic> topics,
      List<OverviewSubscription> subscriptions,
      @JsonInclude(JsonInclude.Include.NON_NULL) OutboxBacklog outbox,
      OverviewTotals totals,
      String next) {}

  /** What the caller may read in all: topics, subscriptions, and their failures. */
  record OverviewTotals(int topics, int subscriptions, long retrying, long deadLetters) {}

  record Caller(String name, String role) {}

  record Namespaces(List<String> namespaces) {}

  record Namespace(String name) {}

  /** The answer to a delete: the name and whether there was anything to delete. */
  record Deleted(String name, boolean deleted) {}

  /** A page of topics by name; {@code next} is the {@code after} of the next page, or null. */
  record Topics(List<Topic> topics, String next) {}

  /**
   * A page of a partition's events; {@code next} is the {@code after} of the next page, or null.
   */
  record EventPage(List<Event> events, Long next) {}

  /** A page of subscriptions by name; {@code next} as for {@link Topics}. */
  record Subscriptions(List<Subscription> subscriptions, String next) {}

  record Rewound(String subscription, List<Lag> partitions) {}

  record Outbox(long events, String oldestCreatedAt, double ageSeconds) {}

  record RetryList(List<Retrying> retries) {}

  record DeadLetterList(List<DeadLetter> deadLetters) {}

  record DeadLetterReason(String reason, long count, String firstDeadAt, String lastDeadAt) {}

  record DeadLetterReasons(String subscription, List<DeadLetterReason> reasons) {}

  /**
   * What a redrive or discard did (or, with {@code dryRun}, would do): at most {@code limit} dead
   * letters; {@code more} says that others matching the filters remain past it.
   */
  record DeadLetterAction(
      String subscription, String action, boolean dryRun, int affected, int limit, boolean more) {}

  record FailureList(List<Failures> failures) {}

  record Published(String id, int partition, boolean duplicate) {}

  record PublishAnswer(String topic, List<Published> results) {}

  /** A fetched event: the ack id sealed for the token, subscription and member. */
  record Delivery(String ackId, int attempt, Event event) {}

  /**
   * A fetch's answer; {@code settled} is there when the fetch carried a settlement (how many events
   * it settled).
   */
  record MemberBatch(
      List<Delivery> events,
      List<Problems.PartitionRef> partitions,
      long checkInWithinMillis,
      @JsonInclude(JsonInclude.Include.NON_NULL) Integer settled) {

    MemberBatch settled(int n) {
      return new MemberBatch(events, partitions, checkInWithinMillis, n);
    }
  }

  record Settled(int settled) {}

  record Left(String subscription, String member, boolean left) {}

  record Live(String status) {}

  record Ready(String status, String problem) {}
}
