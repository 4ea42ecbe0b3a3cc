package io.boxline.spring.boot.lifecycletest;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Boot applications of the tests in this package, run as an application runs ({@code
 * SpringApplication}, its runners, a real web server on a random port), on the PostgreSQL at
 * 127.0.0.1:5432; plain HTTP calls with the JDK's client (the same on Boot 3 and 4).
 */
final class BootApps {
  static final String SERVER = "jdbc:postgresql://127.0.0.1:5432/";

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

  private BootApps() {}

  /** A fresh name for a schema or database, e.g. {@code bxlife_1x2y3z}. */
  static String newName(String prefix) {
    return prefix + "_" + Long.toString(ThreadLocalRandom.current().nextLong() & 0xffffffffL, 36);
  }

  static ConfigurableApplicationContext run(
      Class<?> app, WebApplicationType web, Map<String, Object> properties) {
    return new SpringApplicationBuilder(app).web(web).properties(properties).run();
  }

  /** Runs SQL as the superuser on the server's {@code postgres} database. */
  static void admin(String... statements) throws Exception {
    try (Connection c = DriverManager.getConnection(SERVER + "postgres", "postgres", "");
        Statement s = c.createStatement()) {
      for (String sql : statements) {
        s.execute(sql);
      }
    }
  }

  static int port(ConfigurableApplicationContext context) {
    return Integer.parseInt(context.getEnvironment().getRequiredProperty("local.server.port"));
  }

  record Response(int status, String body) {}

  static Response get(int port, String path) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30))
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return new Response(r.statusCode(), r.body());
  }

  static Response post(int port, String path, String json) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return new Response(r.statusCode(), r.body());
  }
}
