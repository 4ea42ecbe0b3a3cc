package io.boxline.testkit.mariadb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.ValidationException;
import io.boxline.jdbc.JdbcStore;
import io.boxline.spi.Store;
import io.boxline.testkit.TestDatabase;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The dialect is picked from the connection's metadata: MariaDB (under either driver) and MySQL get
 * the MariaDB dialect, versions without SKIP LOCKED / JSON_TABLE are refused with a clear message.
 */
class MariaDbDetectionTest {

  /** A data source whose connections only answer metadata questions. */
  private static DataSource reporting(String product, String version, int major, int minor) {
    DatabaseMetaData md =
        (DatabaseMetaData)
            Proxy.newProxyInstance(
                MariaDbDetectionTest.class.getClassLoader(),
                new Class<?>[] {DatabaseMetaData.class},
                (p, m, a) ->
                    switch (m.getName()) {
                      case "getDatabaseProductName" -> product;
                      case "getDatabaseProductVersion" -> version;
                      case "getDatabaseMajorVersion" -> major;
                      case "getDatabaseMinorVersion" -> minor;
                      default -> throw new UnsupportedOperationException(m.getName());
                    });
    Connection c =
        (Connection)
            Proxy.newProxyInstance(
                MariaDbDetectionTest.class.getClassLoader(),
                new Class<?>[] {Connection.class},
                (p, m, a) ->
                    switch (m.getName()) {
                      case "getMetaData" -> md;
                      case "close" -> null;
                      default -> throw new UnsupportedOperationException(m.getName());
                    });
    return (DataSource)
        Proxy.newProxyInstance(
            MariaDbDetectionTest.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            (p, m, a) -> {
              if (m.getName().equals("getConnection")) {
                return c;
              }
              throw new UnsupportedOperationException(m.getName());
            });
  }

  @Test
  void oldMariaDbAndMySqlAreRefusedWithWhatIsNeeded() {
    assertThatThrownBy(
            () -> JdbcStore.builder(reporting("MariaDB", "10.5.9-MariaDB", 10, 5)).build())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("MariaDB 10.5.9-MariaDB is too old")
        .hasMessageContaining("MariaDB 10.6 or newer");
    // MySQL's own driver reports a MariaDB server as "MySQL 5.5.5-10.4.2-MariaDB".
    assertThatThrownBy(
            () -> JdbcStore.builder(reporting("MySQL", "5.5.5-10.4.2-MariaDB", 5, 5)).build())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("MariaDB 10.6 or newer");
    assertThatThrownBy(() -> JdbcStore.builder(reporting("MySQL", "5.7.44", 5, 7)).build())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("MySQL 5.7.44 is too old")
        .hasMessageContaining("MySQL 8.0 or newer");
    assertThatThrownBy(() -> JdbcStore.builder(reporting("Oracle", "19c", 19, 0)).build())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("MariaDB 10.6+ and MySQL 8.0+");
  }

  @Test
  void supportedVersionsGetTheMariaDbDialect() {
    try (Store mysql = JdbcStore.builder(reporting("MySQL", "8.0.36", 8, 0)).build();
        Store viaMySqlDriver =
            JdbcStore.builder(reporting("MySQL", "5.5.5-10.11.6-MariaDB", 5, 5)).build()) {
      assertThat(mysql.describe()).startsWith("MySQL 8.0 database=boxline");
      assertThat(viaMySqlDriver.describe()).startsWith("MariaDB 10.11 database=boxline");
    }
    try (TestDatabase db = TestDatabase.createMariaDb("detect");
        Store real = JdbcStore.builder(db.dataSource()).schema(db.schema()).build()) {
      assertThat(real.describe()).startsWith("MariaDB 10.").contains("database=" + db.schema());
    }
  }
}
