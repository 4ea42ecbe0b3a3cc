package io.boxline.server.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.server.ServerConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Sealed ack ids: any server with the same token secrets opens them (so any instance serves any
 * member), and nothing opens one for another token, subscription or member, or an altered one.
 */
class AckIdsTest {
  static final String CONFIG =
      "database: {url: 'jdbc:postgresql://127.0.0.1:5432/postgres'}\n"
          + "tokens:\n"
          + "  - {name: ta-consumer, secret: ta-consumer-secret-0123, role: consumer,"
          + " namespaces: [ta]}\n"
          + "  - {name: tb-consumer, secret: tb-consumer-secret-0123, role: consumer,"
          + " namespaces: [tb]}\n";

  static Auth.Caller caller(String secret) {
    // A new Auth each time, as another server instance with the same config would have.
    return new Auth(ServerConfig.parse(CONFIG, "test", Map.of())).authenticate("Bearer " + secret);
  }

  @Test
  void anotherInstanceWithTheSameSecretsOpensWhatOneSealed() {
    byte[] here = caller("ta-consumer-secret-0123").ackKey();
    byte[] there = caller("ta-consumer-secret-0123").ackKey();
    String engine = "7.3.1764079617000123.1041.1042";
    String sealed = AckIds.seal(here, "ta/audit", "ta-consumer:w", engine);
    assertThat(AckIds.open(there, "ta/audit", "ta-consumer:w", sealed)).isEqualTo(engine);
    assertThat(AckIds.seal(there, "ta/audit", "ta-consumer:w", engine))
        .as("sealing is deterministic")
        .isEqualTo(sealed);
    assertThat(sealed).doesNotContain("1764079617000123");
  }

  @Test
  void nothingOpensForAnotherTokenSubscriptionOrMemberOrWhenAltered() {
    byte[] a = caller("ta-consumer-secret-0123").ackKey();
    byte[] b = caller("tb-consumer-secret-0123").ackKey();
    String sealed = AckIds.seal(a, "ta/audit", "ta-consumer:w", "7.3.1.1041.1042");
    assertThat(AckIds.open(b, "ta/audit", "ta-consumer:w", sealed)).isNull();
    assertThat(AckIds.open(a, "ta/other", "ta-consumer:w", sealed)).isNull();
    assertThat(AckIds.open(a, "ta/audit", "ta-consumer:v", sealed)).isNull();
    for (int i = 0; i < sealed.length(); i++) {
      char[] altered = sealed.toCharArray();
      altered[i] = altered[i] == 'A' ? 'B' : 'A';
      assertThat(AckIds.open(a, "ta/audit", "ta-consumer:w", new String(altered)))
          .as("altered at " + i)
          .isNull();
    }
    assertThat(AckIds.open(a, "ta/audit", "ta-consumer:w", "7.3.1.1041.1042")).isNull();
    assertThat(AckIds.open(a, "ta/audit", "ta-consumer:w", "")).isNull();
    assertThat(AckIds.open(a, "ta/audit", "ta-consumer:w", "x".repeat(500))).isNull();
  }
}
