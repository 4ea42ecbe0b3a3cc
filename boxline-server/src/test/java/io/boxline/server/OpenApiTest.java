package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The served API description lists exactly the endpoints the server has. */
class OpenApiTest {
  @Test
  void everyRouteIsDescribedAndEveryDescribedRouteExists() throws Exception {
    ServerConfig config =
        ServerConfig.parse(
            "http: {port: 0}\nauth: {disabled: true}\ndatabase: {url: 'jdbc:h2:mem:openapi;DB_CLOSE_DELAY=-1'}\n",
            "test",
            Map.of());
    try (BoxlineServer server = BoxlineServer.start(config)) {
      Api api = new Api(server.baseUrl(), null);
      Set<String> described = api.describedRoutes();
      assertThat(described).containsExactlyInAnyOrderElementsOf(server.routes());
      // With auth disabled the API answers without a token (for a laptop only).
      assertThat(api.get("/v1/topics").status()).isEqualTo(200);
    }
  }
}
