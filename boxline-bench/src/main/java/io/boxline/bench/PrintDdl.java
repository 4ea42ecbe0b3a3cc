package io.boxline.bench;

import io.boxline.jdbc.JdbcStore;

/**
 * Prints Boxline's PostgreSQL DDL for a schema ({@code PrintDdl <schema>}), for experiments that
 * drive the tables from psql or pgbench (see {@code experiments/}).
 */
public final class PrintDdl {
  private PrintDdl() {}

  public static void main(String[] args) {
    if (args.length != 1) {
      System.err.println("usage: PrintDdl <schema>");
      System.exit(2);
    }
    System.out.println(JdbcStore.exportDdl(JdbcStore.Database.POSTGRESQL, args[0], ""));
  }
}
