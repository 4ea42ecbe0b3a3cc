package io.boxline.spi;

import java.sql.Connection;

/**
 * Storage of one Boxline deployment: schema, outbox, log, subscriptions and cursors. It is the sum
 * of narrow roles, one per part of the engine that uses it ({@link CatalogStore}, {@link
 * PublishStore}, {@link SequencerStore}, {@link CursorStore}, {@link ParkingStore}, {@link
 * InboxStore}, {@link RetentionStore}, {@link MonitoringStore}), plus its lifecycle. The JDBC
 * module provides the implementation; every implementation must pass the store contract ({@code
 * io.boxline.testkit.suite.store}: one class per role, such as {@code CatalogContract}, with one
 * nested class per method) and the behaviour suites in {@code boxline-testkit}, except core's
 * in-memory store for tests ({@code io.boxline.internal.memory.InMemoryStore}), which passes the
 * contract only (the behaviour suites need a database). Methods throw {@link
 * io.boxline.StoreException} (unchecked) on database failure.
 */
public interface Store
    extends CatalogStore,
        PublishStore,
        SequencerStore,
        CursorStore,
        ParkingStore,
        InboxStore,
        RetentionStore,
        MonitoringStore,
        AutoCloseable {

  /** Creates or upgrades the schema; safe when several processes call it at once. */
  void migrate();

  /** A short description for logs, e.g. {@code PostgreSQL 15.2 schema=boxline}. */
  String describe();

  /** A new connection with auto-commit off; the caller closes it. */
  Connection openTransaction();

  /** The database coordination store that shares this store's database (the default). */
  CoordinationStore coordination();

  /**
   * Starts listening for cross-process wake-ups on a thread of the store's own, or returns false
   * when the database has no such mechanism (then the engine relies on in-process signals and
   * polling).
   */
  boolean listen(WakeupListener listener);

  /** Stops the listener and releases resources. Safe to call twice. */
  @Override
  void close();
}
