package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.kafka.KafkaSink;
import io.boxline.nats.NatsSink;
import io.boxline.rabbitmq.RabbitMqSink;
import io.boxline.relay.Relay;
import io.boxline.relay.Sink;
import io.boxline.server.ServerConfig;
import io.boxline.webhook.WebhookSink;
import java.time.Duration;
import java.util.Map;

/** Builds and starts the relays a config declares. */
final class Relays {
  private Relays() {}

  static Relay start(
      Boxline boxline, ServerConfig.RelaySpec spec, String instanceId, Duration shutdownTimeout) {
    return Relay.builder(boxline)
        .subscription(spec.subscription())
        .sink(sink(boxline, spec))
        .batchSize(spec.batchSize())
        .concurrency(spec.concurrency())
        .shutdownTimeout(shutdownTimeout)
        .consumerId(instanceId + "-" + spec.name())
        .start();
  }

  private static Sink sink(Boxline boxline, ServerConfig.RelaySpec spec) {
    Map<String, String> s = spec.settings();
    switch (spec.kind()) {
      case "webhook":
        {
          WebhookSink.Builder b = WebhookSink.builder().url(s.get("url"));
          if (s.containsKey("secret")) {
            b.signingSecret(s.get("secret"));
          }
          if (s.containsKey("standardWebhooksSecret")) {
            b.standardWebhooksSecret(s.get("standardWebhooksSecret"));
          }
          if (s.containsKey("requestTimeout")) {
            b.requestTimeout(io.boxline.Names.duration(s.get("requestTimeout")));
          }
          return b.build();
        }
      case "kafka":
        {
          KafkaSink.Builder b =
              KafkaSink.builder().bootstrapServers(s.get("bootstrapServers")).boxline(boxline);
          if (s.containsKey("topic")) {
            b.topic(s.get("topic"));
          }
          return b.build();
        }
      case "rabbitmq":
        {
          RabbitMqSink.Builder b = RabbitMqSink.builder().uri(s.get("uri"));
          if (s.containsKey("exchange")) {
            String exchange = s.get("exchange");
            b.exchange(e -> exchange);
          }
          if (s.containsKey("routingKey")) {
            String key = s.get("routingKey");
            b.routingKey(e -> key);
          }
          return b.build();
        }
      case "nats":
        {
          NatsSink.Builder b = NatsSink.builder().servers(s.get("servers"));
          if (s.containsKey("subject")) {
            String subject = s.get("subject");
            b.subject(e -> subject);
          }
          if (s.containsKey("stream")) {
            b.expectedStream(s.get("stream"));
          }
          return b.build();
        }
      default:
        throw new IllegalStateException("unknown relay kind " + spec.kind());
    }
  }
}
