package io.boxline.chaos;

/** Opens the database a run asks for. */
final class ChaosDatabases {
  private ChaosDatabases() {}

  static ChaosDatabase open(String kind) {
    return switch (kind) {
      case "postgresql", "postgres", "pg" -> PrivatePostgres.start();
      case "mariadb" -> PrivateMariaDb.start();
      case "mariadb-shared" -> SharedMariaDb.open();
      default ->
          throw new IllegalArgumentException(
              "unknown db " + kind + "; use postgresql, mariadb or mariadb-shared");
    };
  }
}
