package io.boxline.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.boxline.Event;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * What {@code boxline publish} stores for payloads given as text, over a database or a server: a
 * JSON document as {@code application/json}, byte for byte; other text as UTF-8 text; an explicit
 * content type as given; bytes as {@code application/octet-stream}.
 */
final class PublishedContentTypes {
  /** JSON with spacing and a number whose written form a parser would not keep (12.50). */
  static final String PRICED = "{\"total\": 12.50, \"name\": \"Zoe\", \"lines\": [1, 2]}";

  private PublishedContentTypes() {}

  /** Publishes the cases to {@code topic} (empty, one partition) and checks what was stored. */
  static void check(Cli cli, String topic, Supplier<List<Event>> stored) {
    ok(cli, "publish", topic, "--key", "a", "--type", "Priced", "--payload", PRICED);
    ok(cli, "publish", topic, "--key", "b", "--type", "Noted", "--payload", "not {json");
    ok(
        cli,
        "publish",
        topic,
        "--key",
        "c",
        "--type",
        "Priced",
        "--payload",
        PRICED,
        "--content-type",
        "application/vnd.acme.price+json");
    Cli.Result lines =
        cli.input(
            "{\"key\":\"d\",\"type\":\"Line\",\"payload\":{\"total\":1}}\n"
                + "{\"key\":\"e\",\"type\":\"Line\",\"payload\":\"[1, 2]\"}\n"
                + "{\"key\":\"f\",\"type\":\"Line\",\"payload\":\"plain\"}\n"
                + "{\"key\":\"g\",\"type\":\"Line\",\"payloadBase64\":\"AAE=\"}\n",
            "publish",
            topic,
            "--stdin");
    assertThat(lines.exit()).as(lines.err()).isZero();
    Map<String, Event> byKey = new HashMap<>();
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (true) {
      byKey.clear();
      stored.get().forEach(e -> byKey.put(e.key(), e));
      if (byKey.size() == 7) {
        break;
      }
      if (System.nanoTime() > deadline) {
        fail("7 events sequenced within 60 s; stored: " + byKey.keySet());
      }
      try {
        Thread.sleep(20); // polling a condition with a deadline
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        fail("interrupted");
      }
    }
    Event a = byKey.get("a");
    assertThat(a.contentType()).as("a JSON payload").isEqualTo("application/json");
    assertThat(a.payload()).as("byte for byte").isEqualTo(PRICED.getBytes(StandardCharsets.UTF_8));
    assertThat(byKey.get("b").contentType()).as("text").isEqualTo("text/plain; charset=utf-8");
    assertThat(text(byKey.get("b"))).isEqualTo("not {json");
    assertThat(byKey.get("c").contentType()).isEqualTo("application/vnd.acme.price+json");
    assertThat(byKey.get("c").payload()).isEqualTo(PRICED.getBytes(StandardCharsets.UTF_8));
    assertThat(byKey.get("d").contentType()).isEqualTo("application/json");
    assertThat(text(byKey.get("d"))).isEqualTo("{\"total\":1}");
    assertThat(byKey.get("e").contentType()).isEqualTo("application/json");
    assertThat(text(byKey.get("e"))).isEqualTo("[1, 2]");
    assertThat(byKey.get("f").contentType()).isEqualTo("text/plain; charset=utf-8");
    assertThat(byKey.get("g").contentType()).isEqualTo("application/octet-stream");
    assertThat(byKey.get("g").payload()).containsExactly(0, 1);
  }

  private static String text(Event e) {
    return new String(e.payload(), StandardCharsets.UTF_8);
  }

  private static void ok(Cli cli, String... args) {
    Cli.Result r = cli.run(args);
    assertThat(r.exit()).as("exit of boxline %s; err: %s", List.of(args), r.err()).isZero();
  }
}
