package io.boxline.bench;

import io.boxline.jdbc.JdbcStore;
import java.util.List;

/**
 * {@code ddl --schema=<schema>}: prints Boxline's PostgreSQL DDL for a schema, for experiments that
 * drive the tables from psql or pgbench (see {@code experiments/}).
 */
final class PrintDdl {
  static final Opt<String> SCHEMA = Opt.text("schema", "boxline", "the schema the DDL creates");

  static final Workload WORKLOAD =
      Workload.of(
          "ddl",
          Bench.Suite.TOOL,
          "prints Boxline's PostgreSQL DDL (no benchmark)",
          List.of(SCHEMA),
          run ->
              JdbcStore.exportDdl(JdbcStore.Database.POSTGRESQL, run.o().get(SCHEMA), "") + "\n");

  private PrintDdl() {}
}
