package io.boxline.testkit.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.StoreException;
import io.boxline.ValidationException;
import io.boxline.etcd.EtcdCoordination;
import io.boxline.testkit.DedicatedEtcd;
import io.boxline.testkit.suite.SuiteSupport;
import io.etcd.jetcd.Auth;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** etcd over TLS with authentication on, on a server of this test's own. */
class EtcdSecurityTest {
  private static ByteSequence bytes(String s) {
    return ByteSequence.from(s, StandardCharsets.UTF_8);
  }

  @Test
  void coordinatesOverTlsAsAnAuthenticatedUserAndRefusesAWrongPassword() throws Exception {
    try (DedicatedEtcd etcd = DedicatedEtcd.startTls()) {
      try (Client admin =
          Client.builder()
              .endpoints(etcd.endpoint())
              .sslContext(ssl -> ssl.trustManager(etcd.certificate().toFile()))
              .build()) {
        Auth auth = admin.getAuthClient();
        auth.roleAdd(bytes("root")).get(30, TimeUnit.SECONDS);
        auth.userAdd(bytes("root"), bytes("s3cret")).get(30, TimeUnit.SECONDS);
        auth.userGrantRole(bytes("root"), bytes("root")).get(30, TimeUnit.SECONDS);
        auth.authEnable().get(30, TimeUnit.SECONDS);
      }
      try (EtcdCoordination store =
          EtcdCoordination.builder()
              .endpoints(etcd.endpoint())
              .trustedCertificates(etcd.certificate())
              .user("root", "s3cret")
              .build()) {
        store.checkIn("g", "m1", 1, Duration.ofSeconds(30));
        assertThat(store.liveMembers("g")).isEqualTo(List.of("m1"));
        assertThat(
                SuiteSupport.acquire(
                    store, "g", List.of(new io.boxline.spi.PartitionKey(1, 0)), "m1"))
            .hasSize(1);
      }
      try (EtcdCoordination wrong =
          EtcdCoordination.builder()
              .endpoints(etcd.endpoint())
              .trustedCertificates(etcd.certificate())
              .user("root", "guess")
              .requestTimeout(Duration.ofSeconds(10))
              .build()) {
        assertThatThrownBy(() -> wrong.checkIn("g", "m2", 1, Duration.ofSeconds(30)))
            .isInstanceOf(StoreException.class)
            .hasMessageContaining("authentication failed");
      }
    }
  }

  @Test
  void presentsAClientCertificateToAnEtcdThatDemandsOne() {
    try (DedicatedEtcd etcd = DedicatedEtcd.startTls(true)) {
      try (EtcdCoordination store =
          EtcdCoordination.builder()
              .endpoints(etcd.endpoint())
              .trustedCertificates(etcd.certificate())
              .clientCertificate(etcd.clientCertificate(), etcd.clientKey())
              .build()) {
        store.checkIn("g", "m1", 1, Duration.ofSeconds(30));
        assertThat(store.liveMembers("g")).isEqualTo(List.of("m1"));
      }
      try (EtcdCoordination without =
          EtcdCoordination.builder()
              .endpoints(etcd.endpoint())
              .trustedCertificates(etcd.certificate())
              .requestTimeout(Duration.ofSeconds(3))
              .build()) {
        assertThatThrownBy(() -> without.checkIn("g", "m2", 1, Duration.ofSeconds(30)))
            .isInstanceOf(StoreException.class);
      }
    }
  }

  @Test
  void tlsSettingsNeedHttpsEndpointsAndEndpointsOneScheme() throws Exception {
    java.nio.file.Path pem = java.nio.file.Files.createTempFile("boxline-ca-", ".pem");
    try {
      assertThatThrownBy(
              () ->
                  EtcdCoordination.builder()
                      .endpoints("http://127.0.0.1:2379")
                      .trustedCertificates(pem)
                      .build())
          .isInstanceOf(ValidationException.class)
          .hasMessage(
              "trustedCertificates and clientCertificate need https:// etcd endpoints, got"
                  + " [http://127.0.0.1:2379]");
      assertThatThrownBy(
              () ->
                  EtcdCoordination.builder()
                      .endpoints("https://127.0.0.1:2379,http://127.0.0.1:2381")
                      .build())
          .isInstanceOf(ValidationException.class)
          .hasMessage(
              "etcd endpoints must all be http:// or all https://, got"
                  + " [https://127.0.0.1:2379, http://127.0.0.1:2381]");
      assertThatThrownBy(
              () ->
                  EtcdCoordination.builder()
                      .trustedCertificates(java.nio.file.Path.of("/no/such/ca.pem")))
          .isInstanceOf(ValidationException.class)
          .hasMessage("trustedCertificates must be a readable PEM file, got /no/such/ca.pem");
      assertThatThrownBy(() -> EtcdCoordination.builder().user("root", ""))
          .isInstanceOf(ValidationException.class)
          .hasMessage("etcd user name and password must not be empty");
    } finally {
      java.nio.file.Files.deleteIfExists(pem);
    }
  }
}
