package io.boxline.server.internal;

import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.RemoteConsumers;
import io.boxline.RemoteConsumers.Outcome;
import io.boxline.RemoteConsumers.Settlement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a group member sends and gets, the same over HTTP ({@link ConsumeApi}) and over a WebSocket
 * ({@link WebSocketApi}): the member id, a batch as JSON with sealed ack ids, and settlements.
 */
final class MemberWire {
  private static final Pattern MEMBER = Pattern.compile("[A-Za-z0-9._:-]{1,100}");
  private static final Set<String> SETTLEMENT_FIELDS =
      Set.of("ackId", "outcome", "retryIn", "reason");

  private MemberWire() {}

  /** The member id as the group knows it: bound to the calling token. */
  static String memberId(Auth.Caller caller, String given) {
    if (given == null || !MEMBER.matcher(given).matches()) {
      throw ApiException.badRequest(
          "member id '"
              + Problems.quote(given)
              + "' must be 1 to 100 characters from A-Z a-z 0-9 . _ : -, e.g. \"worker-1\"");
    }
    return caller.memberId(given);
  }

  /**
   * A fetched batch as the API shows it: each ack id sealed for this token, subscription, member.
   */
  static ApiBodies.MemberBatch batch(
      byte[] key, String subscription, String member, RemoteConsumers.Batch batch, boolean raw) {
    List<ApiBodies.Delivery> events = new ArrayList<>();
    for (RemoteConsumers.Delivery d : batch.deliveries()) {
      events.add(
          new ApiBodies.Delivery(
              AckIds.seal(key, subscription, member, d.ackId()),
              d.attempt(),
              Views.event(d.event(), raw)));
    }
    List<Problems.PartitionRef> partitions = new ArrayList<>();
    batch
        .partitions()
        .forEach(
            p -> partitions.add(new Problems.PartitionRef(p.topic().toString(), p.partition())));
    return new ApiBodies.MemberBatch(events, partitions, batch.checkInWithin().toMillis(), null);
  }

  /** The settlements of a {@code "settle"} list, each ack id opened; 400 for anything amiss. */
  static List<Settlement> settlements(
      JsonNode list, byte[] key, String subscription, String member) {
    if (list == null || !list.isArray() || list.isEmpty()) {
      throw ApiException.badRequest(
          "the body is {\"settle\": [{\"ackId\": \"...\", \"outcome\": \"done\"}, ...]}; outcome is done, retry or dead");
    }
    if (list.size() > 10_000) {
      throw new ApiException(413, "too_large", "settle at most 10000 events per request");
    }
    List<Settlement> settlements = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      JsonNode x = list.get(i);
      String at = "settle[" + i + "]: ";
      if (!x.isObject()) {
        throw ApiException.badRequest(at + "must be an object");
      }
      Problems.onlyFields(x, at, SETTLEMENT_FIELDS);
      String sealed = AdminApi.text(x, "ackId", true);
      String outcome = AdminApi.text(x, "outcome", false);
      if (outcome == null) {
        throw ApiException.badRequest(
            at + "needs \"outcome\": done, retry or dead (nothing is assumed)");
      }
      Outcome o;
      try {
        o = Outcome.valueOf(outcome.toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest(
            at + "outcome must be done, retry or dead, got '" + Problems.quote(outcome) + "'");
      }
      String retryIn = AdminApi.text(x, "retryIn", false);
      if (retryIn != null && o != Outcome.RETRY) {
        throw ApiException.badRequest(at + "retryIn goes with outcome retry only");
      }
      Duration wait = null;
      if (retryIn != null) {
        try {
          wait = io.boxline.Names.duration(retryIn);
          if (wait.isNegative()) {
            throw new IllegalArgumentException();
          }
        } catch (RuntimeException e) {
          throw ApiException.badRequest(
              at
                  + "retryIn must be a duration such as 500ms, 30s or 5m, got '"
                  + Problems.quote(retryIn)
                  + "'");
        }
      }
      String ackId = AckIds.open(key, subscription, member, sealed);
      if (ackId == null) {
        throw ApiException.badRequest(
            at
                + "ackId is not one that fetch gave this member of this subscription; settle only"
                + " the ack ids of your own fetches");
      }
      settlements.add(new Settlement(ackId, o, wait, AdminApi.text(x, "reason", false)));
    }
    return settlements;
  }

  static double number(JsonNode body, String field) {
    JsonNode v = body.get(field);
    if (v == null || !v.isNumber()) {
      throw ApiException.badRequest("\"" + field + "\" must be a number");
    }
    return v.asDouble();
  }
}
