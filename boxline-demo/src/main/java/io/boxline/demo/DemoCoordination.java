package io.boxline.demo;

import io.boxline.Boxline;
import io.boxline.Coordination;
import io.boxline.StoreException;
import io.boxline.demo.DemoOptions.CoordinationKind;
import io.boxline.etcd.EtcdCoordination;
import io.boxline.spi.CoordinationStore;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.DeleteOption;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where the demo's consumer groups keep membership and leases ({@code --coordination}), handed to
 * each Boxline instance of the demo as a process of its own would have it: the database, the
 * default, is the store's own; memory is one store shared by every instance, which is why it works
 * within one JVM only; etcd is a client per instance, its keys under {@code /boxline-demo/<run>/}
 * and deleted at the end.
 */
final class DemoCoordination implements AutoCloseable {
  private static final Duration ETCD_TIMEOUT = Duration.ofSeconds(5);

  /** How long the first call may take before the demo says it cannot reach etcd. */
  private static final Duration ETCD_PROBE_TIMEOUT = Duration.ofSeconds(2);

  final CoordinationKind kind;
  private final PrintStream out;
  private final CoordinationStore memory;
  private final List<String> endpoints;
  private final String keyPrefix;

  private DemoCoordination(DemoOptions options, DemoDatabase db, PrintStream out) {
    this.kind = options.coordination;
    this.out = out;
    this.memory = kind == CoordinationKind.memory ? Coordination.inMemory() : null;
    this.endpoints =
        kind == CoordinationKind.etcd
            ? Arrays.stream(options.etcdEndpoints().split(","))
                .map(String::strip)
                .filter(s -> !s.isEmpty())
                .toList()
            : List.of();
    this.keyPrefix = "/boxline-demo/" + db.runId + "/";
  }

  /** Checks that the store answers and says which it is. */
  static DemoCoordination open(DemoOptions options, DemoDatabase db, PrintStream out) {
    DemoCoordination c = new DemoCoordination(options, db, out);
    switch (c.kind) {
      case database -> out.println("Coordination: the database (Boxline's tables)");
      case memory ->
          out.println("Coordination: in memory (one store shared by the consumers in this JVM)");
      case etcd -> {
        try (CoordinationStore probe = c.etcd(ETCD_PROBE_TIMEOUT)) {
          probe.liveMembers("billing");
        } catch (StoreException e) {
          throw new DemoDatabase.CannotRun(
              "cannot reach etcd at "
                  + String.join(",", c.endpoints)
                  + " ("
                  + e.getMessage()
                  + "). Start one (Debian/Ubuntu: apt-get install etcd-server, then etcd) or"
                  + " point --etcd-endpoints at yours.");
        }
        out.println(
            "Coordination: etcd at "
                + String.join(",", c.endpoints)
                + ", keys under "
                + c.keyPrefix);
      }
    }
    return c;
  }

  /** {@code builder} with the coordination of one more Boxline instance. */
  Boxline.Builder configure(Boxline.Builder builder) {
    CoordinationStore store = newStore();
    return store == null ? builder : builder.coordination(store);
  }

  /**
   * The coordination store of one more Boxline instance, to be closed with it (unless {@link
   * #shared()}); null for the database's own.
   */
  CoordinationStore newStore() {
    return switch (kind) {
      case database -> null;
      case memory -> memory;
      case etcd -> etcd(ETCD_TIMEOUT);
    };
  }

  /** Whether every instance gets the same store (closing it is its last user's business). */
  boolean shared() {
    return kind == CoordinationKind.memory;
  }

  private EtcdCoordination etcd(Duration timeout) {
    return EtcdCoordination.builder()
        .endpoints(endpoints)
        .keyPrefix(keyPrefix)
        .connectTimeout(timeout)
        .requestTimeout(timeout)
        .build();
  }

  /** Deletes the run's etcd keys (members and leases are gone; free leases keep their key). */
  @Override
  public void close() {
    if (kind != CoordinationKind.etcd) {
      return;
    }
    try (Client client = Client.builder().endpoints(endpoints.toArray(String[]::new)).build()) {
      ByteSequence prefix = ByteSequence.from(keyPrefix, StandardCharsets.UTF_8);
      long deleted =
          client
              .getKVClient()
              .delete(prefix, DeleteOption.builder().isPrefix(true).build())
              .get(ETCD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
              .getDeleted();
      out.println("Deleted " + deleted + " etcd keys under " + keyPrefix + ".");
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      out.println("warning: could not delete the etcd keys under " + keyPrefix + ": " + e);
    }
  }
}
