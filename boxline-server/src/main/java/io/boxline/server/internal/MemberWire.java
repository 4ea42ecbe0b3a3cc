package io.boxline.server.internal;

import io.boxline.RemoteConsumers;
import io.boxline.RemoteConsumers.Outcome;
import io.boxline.RemoteConsumers.Settlement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What a group member sends and gets, the same over HTTP ({@link ConsumeApi}) and over a WebSocket
 * ({@link WebSocketApi}): the member id, a batch as JSON with sealed ack ids, and settlements.
 */
final class MemberWire {
  private static final Pattern MEMBER = Pattern.compile("[A-Za-z0-9._:-]{1,100}");

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
      List<ApiRequests.Settlement> list, byte[] key, String subscription, String member) {
    if (list == null || list.isEmpty()) {
      throw ApiException.badRequest(
          "the body is {\"settle\": [{\"ackId\": \"...\", \"outcome\": \"done\"}, ...]}; outcome is done, retry or dead");
    }
    if (list.size() > 10_000) {
      throw new ApiException(413, "too_large", "settle at most 10000 events per request");
    }
    List<Settlement> settlements = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      ApiRequests.Settlement x = list.get(i);
      String at = "settle[" + i + "]: ";
      if (x == null) {
        throw ApiException.badRequest(at + "must be an object");
      }
      if (x.ackId() == null) {
        throw ApiException.badRequest(at + "the body needs \"ackId\"");
      }
      if (x.outcome() == null) {
        throw ApiException.badRequest(
            at + "needs \"outcome\": done, retry or dead (nothing is assumed)");
      }
      Outcome o;
      try {
        o = Outcome.valueOf(x.outcome().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw ApiException.badRequest(
            at + "outcome must be done, retry or dead, got '" + Problems.quote(x.outcome()) + "'");
      }
      if (x.retryIn() != null && o != Outcome.RETRY) {
        throw ApiException.badRequest(at + "retryIn goes with outcome retry only");
      }
      String ackId = AckIds.open(key, subscription, member, x.ackId());
      if (ackId == null) {
        throw ApiException.badRequest(
            at
                + "ackId is not one that fetch gave this member of this subscription; settle only"
                + " the ack ids of your own fetches");
      }
      settlements.add(new Settlement(ackId, o, x.retryIn(), x.reason()));
    }
    return settlements;
  }
}
