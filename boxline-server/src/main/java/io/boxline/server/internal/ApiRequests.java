package io.boxline.server.internal;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.boxline.GroupPolicy;
import io.boxline.RetentionPolicy;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The body of every HTTP request and WebSocket message the server takes, as records bound by {@link
 * RequestBodies} (which refuses unknown fields and wrong JSON types, naming the field). A field the
 * sender left out is null; the handlers apply defaults and check values, each in one place, with
 * the messages the API documents. openapi.json describes the same shapes.
 */
final class ApiRequests {
  private ApiRequests() {}

  /** {@code POST /v1/namespaces}. */
  record NewNamespace(String name) {}

  /** {@code POST /v1/topics}: partitions default to 16, sequencing to {@code sequencer}. */
  record NewTopic(String name, Integer partitions, String sequencing) {}

  /** {@code POST /v1/subscriptions}: start defaults to {@code earliest}. */
  record NewSubscription(String name, List<String> topics, String start) {}

  /** {@code POST /v1/subscriptions/{s}/rename} and {@code /rewind}: where to. */
  record Target(String to) {}

  /** A group policy ({@code PUT .../group-policy}); a field left out keeps its default. */
  record GroupPolicyBody(
      Double checkInRate,
      Duration minCheckInInterval,
      Double deadlineMultiplier,
      Double slack,
      Duration releaseGrace,
      Duration idleRelease,
      Integer batchSize,
      Duration maxCheckInInterval,
      Integer maxMembers) {

    GroupPolicy policy() {
      GroupPolicy d = GroupPolicy.DEFAULT;
      return Call.valid(
          () ->
              new GroupPolicy(
                  checkInRate == null ? d.checkInRate() : checkInRate,
                  minCheckInInterval == null ? d.minCheckInInterval() : minCheckInInterval,
                  deadlineMultiplier == null ? d.deadlineMultiplier() : deadlineMultiplier,
                  slack == null ? d.slack() : slack,
                  releaseGrace == null ? d.releaseGrace() : releaseGrace,
                  idleRelease == null ? d.idleRelease() : idleRelease,
                  within("batchSize", batchSize, d.batchSize(), 10_000),
                  maxCheckInInterval == null ? d.maxCheckInInterval() : maxCheckInInterval,
                  within("maxMembers", maxMembers, d.maxMembers(), 100_000)));
    }

    private static int within(String field, Integer v, int dflt, int max) {
      if (v == null) {
        return dflt;
      }
      if (v < 0 || v > max) {
        throw ApiException.badRequest(
            "\"" + field + "\" must be between 0 and " + max + ", got " + v);
      }
      return v;
    }
  }

  /** A topic's retention ({@code PUT /v1/topics/{t}/retention}); left out: the default. */
  record Retention(
      Duration maxAge, Boolean keepUnconsumed, Long maxEventsPerPartition, Duration abandonAfter) {

    RetentionPolicy policy() {
      return Call.valid(
          () ->
              new RetentionPolicy(
                  maxAge,
                  keepUnconsumed == null || keepUnconsumed,
                  maxEventsPerPartition == null ? 0 : maxEventsPerPartition,
                  abandonAfter == null ? RetentionPolicy.DEFAULT_ABANDON_AFTER : abandonAfter));
    }
  }

  /**
   * One event to publish, or, with only {@code events}, a batch of them (all or nothing). The
   * payload's bytes are taken from the body as sent ({@link Payloads}); here it is only seen.
   */
  record Publish(
      String id,
      String key,
      String type,
      String source,
      String idempotencyKey,
      String deliverAt,
      @JsonDeserialize(using = Seen.class) Boolean payload,
      String payloadBase64,
      String contentType,
      Map<String, String> headers,
      List<Publish> events) {

    boolean isBatch() {
      return events != null;
    }

    /** Whether anything but {@code events} was given. */
    boolean hasEventFields() {
      return id != null
          || key != null
          || type != null
          || source != null
          || idempotencyKey != null
          || deliverAt != null
          || payload != null
          || payloadBase64 != null
          || contentType != null
          || headers != null;
    }
  }

  /** Skips a value without building it: true that there was one. */
  static final class Seen extends JsonDeserializer<Boolean> {
    @Override
    public Boolean deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      p.skipChildren();
      return Boolean.TRUE;
    }

    @Override
    public Boolean getNullValue(DeserializationContext ctxt) {
      return Boolean.TRUE; // "payload": null is a payload (JSON null), as the bytes say
    }

    @Override
    public Object getAbsentValue(DeserializationContext ctxt) {
      return null; // no payload field at all
    }
  }

  /** Fetch for a member ({@code POST .../members/{m}/fetch}), settling the last batch first. */
  record Fetch(
      Double weight, Integer max, Integer waitMillis, String payload, List<Settlement> settle) {}

  /** {@code POST .../members/{m}/settle}. */
  record Settle(List<Settlement> settle) {}

  /** What became of one delivered event; retryIn goes with outcome retry only. */
  record Settlement(String ackId, String outcome, Duration retryIn, String reason) {}

  /**
   * Selects dead letters to redrive or discard ({@code limit} at most, 100,000 by default); with
   * {@code dryRun} they are only counted.
   */
  record DeadLetterFilter(
      String topic,
      String type,
      String key,
      String eventId,
      String error,
      String deadBefore,
      String deadAfter,
      String after,
      Integer limit,
      Boolean dryRun) {}

  /** A message on a member's WebSocket; {@code id}, any JSON, is echoed in the answer. */
  @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "op")
  @JsonSubTypes({
    @JsonSubTypes.Type(value = WsFetch.class, name = "fetch"),
    @JsonSubTypes.Type(value = WsSettle.class, name = "settle"),
    @JsonSubTypes.Type(value = WsLeave.class, name = "leave")
  })
  sealed interface WsMessage permits WsFetch, WsSettle, WsLeave {}

  /** Asks for the next batch: pushed when there are events. */
  record WsFetch(JsonNode id, Double weight, Integer max, String payload) implements WsMessage {}

  /** Settles delivered events. */
  record WsSettle(JsonNode id, List<Settlement> settle) implements WsMessage {}

  /** Leaves the group and closes the socket. */
  record WsLeave(JsonNode id) implements WsMessage {}
}
