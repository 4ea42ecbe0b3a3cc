package io.boxline.cli.http;

import static io.boxline.cli.http.ServerClient.of;
import static io.boxline.cli.http.ServerClient.segment;

import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.RemoteConsumers.Batch;
import io.boxline.RemoteConsumers.Delivery;
import io.boxline.RemoteConsumers.Settlement;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A member of a subscription's consumer group through a Boxline server: fetch (a long poll that
 * checks the member in), settle, leave; the server's {@code …/members/{member}} routes, read into
 * the records of {@link io.boxline.RemoteConsumers}.
 */
public final class HttpMembers {
  private final ServerClient server;

  public HttpMembers(ServerClient server) {
    this.server = server;
  }

  private static String path(String subscription, String member) {
    return HttpAdmin.subscriptionPath(subscription) + "/members/" + segment(member);
  }

  /** Checks in and returns up to {@code max} events, waiting up to {@code waitMillis} for some. */
  public Batch fetch(String subscription, String member, double weight, int max, int waitMillis) {
    JsonNode n =
        server.post(
            path(subscription, member) + "/fetch",
            of("weight", weight, "max", max, "waitMillis", waitMillis, "payload", "base64"));
    List<Delivery> deliveries =
        Views.list(
            n.get("events"),
            d ->
                new Delivery(
                    d.get("ackId").asText(),
                    Views.event(d.get("event")),
                    d.get("attempt").asInt()));
    List<TopicPartition> partitions =
        Views.list(
            n.get("partitions"),
            p ->
                new TopicPartition(
                    TopicName.parse(p.get("topic").asText()), p.get("partition").asInt()));
    return new Batch(
        deliveries, partitions, Duration.ofMillis(n.path("checkInWithinMillis").asLong(2000)));
  }

  /** Settles fetched events, in the order they were fetched; 409 when a partition moved on. */
  public int settle(String subscription, String member, List<Settlement> settlements) {
    List<Object> list = new ArrayList<>();
    for (Settlement s : settlements) {
      Map<String, Object> m =
          of("ackId", s.ackId(), "outcome", s.outcome().name().toLowerCase(Locale.ROOT));
      if (s.retryIn() != null) {
        m.put("retryIn", s.retryIn().toMillis() + "ms");
      }
      if (s.reason() != null) {
        m.put("reason", s.reason());
      }
      list.add(m);
    }
    return server
        .post(path(subscription, member) + "/settle", of("settle", list))
        .path("settled")
        .asInt();
  }

  /** Leaves the group: its partitions are free for the others at once. */
  public void leave(String subscription, String member) {
    server.delete(path(subscription, member));
  }
}
