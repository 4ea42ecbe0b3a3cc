package io.boxline.client.internal;

import static io.boxline.client.internal.HttpTransport.of;
import static io.boxline.client.internal.HttpTransport.segment;

import com.fasterxml.jackson.databind.JsonNode;
import io.boxline.RemoteConsumers.Batch;
import io.boxline.RemoteConsumers.Delivery;
import io.boxline.RemoteConsumers.Settlement;
import io.boxline.TopicName;
import io.boxline.TopicPartition;
import io.boxline.client.RemoteMembers;
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
final class HttpMembers implements RemoteMembers {
  private final HttpTransport server;

  HttpMembers(HttpTransport server) {
    this.server = server;
  }

  private static String path(String subscription, String member) {
    return HttpAdmin.subscriptionPath(subscription) + "/members/" + segment(member);
  }

  @Override
  public Batch fetch(String subscription, String member, double weight, int max, Duration wait) {
    JsonNode n =
        server.post(
            path(subscription, member) + "/fetch",
            of("weight", weight, "max", max, "waitMillis", wait.toMillis(), "payload", "base64"),
            wait);
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

  @Override
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

  @Override
  public void leave(String subscription, String member) {
    server.delete(path(subscription, member));
  }
}
