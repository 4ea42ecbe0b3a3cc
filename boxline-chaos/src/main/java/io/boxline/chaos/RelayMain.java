package io.boxline.chaos;

import com.zaxxer.hikari.HikariDataSource;
import io.boxline.Boxline;
import io.boxline.nats.NatsSink;
import io.boxline.relay.Relay;
import io.boxline.testkit.process.ChildMain;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/** Child: a relay of the {@code relay} subscription to the private NATS JetStream stream. */
public final class RelayMain {
  private RelayMain() {}

  public static void main(String[] argv) throws Exception {
    ChildArgs args = ChildArgs.parse(argv);
    int concurrency = args.concurrency;
    HikariDataSource pool = args.waitingPool("boxline", 2 * concurrency + 4);
    Boxline boxline = args.startBoxline(pool, false);
    Relay relay =
        ChildArgs.retry(
            "start the relay",
            () ->
                Relay.builder(boxline)
                    .subscription(ChaosNames.RELAY)
                    .consumerId(args.memberId())
                    .batchSize(args.batch)
                    .concurrency(concurrency)
                    .retryBackoff(Duration.ofMillis(100), Duration.ofSeconds(1))
                    .sink(
                        NatsSink.builder()
                            .servers(args.nats)
                            .subject(e -> ChaosNames.subject(e.topic(), e.partition()))
                            .expectedStream(PrivateNats.STREAM)
                            .ackTimeout(Duration.ofSeconds(5))
                            .build())
                    .start());
    args.reportEvery(
        () -> {
          Map<String, Long> m = new LinkedHashMap<>();
          m.put("relaySent", relay.sentCount());
          m.put("relayRetries", relay.retryCount());
          m.put("relayDead", relay.deadLetterCount());
          m.put("relayFenced", relay.consumer().fencedCount());
          m.put("relayLost", relay.consumer().lostCount());
          return m;
        });
    ChildMain.log("READY " + args.incarnation());
    args.awaitShutdown();
    relay.close();
    boxline.close();
    pool.close();
    ChildMain.log("STOPPED");
    System.exit(0);
  }
}
