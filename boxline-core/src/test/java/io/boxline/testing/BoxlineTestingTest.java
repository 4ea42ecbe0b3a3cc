package io.boxline.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What an application's test does with {@link BoxlineTesting}. */
class BoxlineTestingTest {
  private static final TopicName ORDERS = TopicName.of("shop", "orders");
  private Boxline boxline;

  @BeforeEach
  void start() {
    boxline = BoxlineTesting.inMemory().build().start();
    boxline.admin().createNamespace(NamespacePath.of("shop"));
    boxline.admin().createTopic(ORDERS, 2);
    boxline.admin().createSubscription(SubscriptionSpec.of("billing", ORDERS));
  }

  @AfterEach
  void close() {
    boxline.close();
  }

  private void placeOrder(String id, boolean fail) {
    boxline.inTransaction(
        tx -> {
          boxline
              .publisher()
              .publish(
                  tx,
                  OutgoingEvent.builder(ORDERS)
                      .type("order.placed")
                      .key(id)
                      .payload(id.getBytes(StandardCharsets.UTF_8))
                      .build());
          if (fail) {
            throw new IllegalStateException("payment declined");
          }
          return null;
        });
  }

  @Test
  void aTestSeesWhatCommittedTransactionsPublishedAndWaitsForTheHandlers() throws Exception {
    List<String> charged = new CopyOnWriteArrayList<>();
    boxline
        .consumer("billing")
        .handler(e -> charged.add(new String(e.payload(), StandardCharsets.UTF_8)))
        .start();
    placeOrder("o-1", false);
    assertThatThrownBy(() -> placeOrder("o-2", true)).hasMessageContaining("declined");
    placeOrder("o-3", false);

    BoxlineTesting.awaitIdle(boxline, Duration.ofSeconds(10));
    assertThat(charged).containsExactlyInAnyOrder("o-1", "o-3");
    assertThat(BoxlineTesting.published(boxline, ORDERS))
        .extracting(Event::key)
        .containsExactlyInAnyOrder("o-1", "o-3");
  }

  @Test
  void awaitingASubscriptionNobodyReadsTimesOutNamingIt() throws Exception {
    placeOrder("o-1", false);
    BoxlineTesting.awaitSequenced(boxline, Duration.ofSeconds(10));
    assertThat(BoxlineTesting.published(boxline, ORDERS)).hasSize(1);
    assertThatThrownBy(() -> BoxlineTesting.awaitIdle(boxline, Duration.ofMillis(200)))
        .isInstanceOf(TimeoutException.class)
        .hasMessageContaining("billing (1 behind)");
  }
}
