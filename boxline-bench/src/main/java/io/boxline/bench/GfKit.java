package io.boxline.bench;

import io.boxline.Boxline;
import io.boxline.NamespacePath;
import io.boxline.OutgoingEvent;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * What the group (G1–G3) and failure (F1, F2) workloads share besides their {@link BenchDb}: their
 * events and their Boxline.
 */
final class GfKit {
  /** Boxline's schema inside each benchmark database. */
  static final String SCHEMA = "boxline";

  /** The Boxline tables F2 watches. */
  static final List<String> TABLES =
      List.of(
          "outbox",
          "log",
          "cursor",
          "partition",
          "parked",
          "sequencer_lease",
          "member",
          "lease",
          "idempotency",
          "inbox");

  /** Most significant bits of every event id written by these workloads; the low bits index it. */
  static final long ID_MAGIC = 0x0B0C6F00_0000_4000L;

  private GfKit() {}

  // ------------------------------------------------------------------ events
  static UUID id(long index) {
    return new UUID(ID_MAGIC, index);
  }

  /** The index carried by an event id, or -1 when it is not one of ours. */
  static long index(UUID id) {
    return id.getMostSignificantBits() == ID_MAGIC ? id.getLeastSignificantBits() : -1;
  }

  static byte[] payload(long index) {
    return ("{\"n\":" + index + ",\"pad\":\"" + "x".repeat(150) + "\"}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /** Event {@code index} of these workloads. */
  static OutgoingEvent event(TopicName topic, long index, String key) {
    return Payloads.event(topic, id(index), "bench.event", key, payload(index));
  }

  /** A Boxline on a benchmark database's pool, in {@link #SCHEMA}, to be built and started. */
  static Boxline.Builder builder(DataSource pool, String instanceId) {
    return Boxline.builder()
        .store(JdbcStore.builder(pool).schema(SCHEMA).build())
        .instanceId(instanceId);
  }

  /**
   * A started Boxline with the namespace "bench" and {@code topic} (unless null), once it leads the
   * sequencer.
   */
  static Boxline start(Boxline.Builder builder, TopicName topic, int partitions)
      throws InterruptedException {
    Boxline boxline = builder.build().start();
    boxline.admin().createNamespace(NamespacePath.of("bench"));
    if (topic != null) {
      boxline.admin().createTopic(topic, partitions);
    }
    Bench.awaitLeader(boxline);
    return boxline;
  }

  /** The nanoseconds in milliseconds with one decimal. */
  static String ms(long nanos) {
    return Stats.f("%.1f", nanos / 1e6);
  }
}
