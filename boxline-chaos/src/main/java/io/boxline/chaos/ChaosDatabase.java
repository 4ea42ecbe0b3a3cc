package io.boxline.chaos;

import java.time.Duration;

/**
 * The database a chaos run uses: where it is, whether the run may restart it, and the few DDL words
 * that differ between dialects for the run's own tables.
 */
interface ChaosDatabase extends AutoCloseable {
  /** Environment variable carrying the password to the children (kept off command lines). */
  String PASSWORD_ENV = "BOXLINE_CHAOS_DB_PASSWORD";

  /** {@code postgresql} or {@code mariadb}. */
  String kind();

  String url();

  String user();

  String password();

  /** True when the run owns the server and may crash it; a shared server is never restarted. */
  boolean restartable();

  /**
   * Crashes the server (PostgreSQL: {@code pg_ctl stop -m immediate}) and starts it again; returns
   * the time from the crash until it accepted connections again.
   */
  Duration crashAndRestart();

  /** Column type of an ever-growing row number. */
  String serialKey();

  /**
   * Boxline's {@code partition} column as this dialect must write it (a reserved word on MariaDB).
   */
  String partitionColumn();

  /** The schema (PostgreSQL) or database (MariaDB) the run creates for itself. */
  String schema();

  @Override
  void close();
}
