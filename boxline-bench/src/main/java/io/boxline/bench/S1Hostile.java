package io.boxline.bench;

import java.io.IOException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * S1's hostile-client probe: connections that open and never finish a request (headers cut off, or
 * a body that never comes) sit on the server while a well-behaved client asks for liveness and
 * publishes; how long those answers take, and whether they come at all.
 */
final class S1Hostile {
  private S1Hostile() {}

  private static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  /** One row per number of hostile connections: liveness and publish latency, p50 and max. */
  static String probe(String base, String topicPath, int[] counts, int calls) throws Exception {
    StringBuilder out =
        new StringBuilder(
            "\n| unfinished connections | GET /health/live p50 / max ms | publish p50 / max ms |"
                + " answered |\n|---|---|---|---|\n");
    URI uri = URI.create(base);
    for (int n : counts) {
      List<Socket> hostile = new ArrayList<>();
      try {
        for (int i = 0; i < n; i++) {
          Socket s = new Socket(uri.getHost(), uri.getPort());
          String partial =
              i % 2 == 0
                  ? "GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: "
                  : "POST "
                      + topicPath
                      + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                      + "\r\nContent-Length: 100\r\n\r\n{";
          s.getOutputStream().write(partial.getBytes(StandardCharsets.US_ASCII));
          s.getOutputStream().flush();
          hostile.add(s);
        }
        double[] live = new double[calls];
        double[] publish = new double[calls];
        int answered = 0;
        for (int i = 0; i < calls; i++) {
          live[i] = timed(HttpRequest.newBuilder(URI.create(base + "/health/live")).GET());
          publish[i] =
              timed(
                  HttpRequest.newBuilder(URI.create(base + topicPath))
                      .header("Content-Type", "application/json")
                      .POST(
                          HttpRequest.BodyPublishers.ofString(
                              "{\"type\":\"Probe\",\"key\":\"k" + i + "\",\"payload\":{}}")));
          answered += (live[i] < NO_ANSWER ? 1 : 0) + (publish[i] < NO_ANSWER ? 1 : 0);
        }
        Arrays.sort(live);
        Arrays.sort(publish);
        out.append(
            String.format(
                Locale.ROOT,
                "| %d | %.2f / %.2f | %.2f / %.2f | %d of %d |%n",
                n,
                live[calls / 2],
                live[calls - 1],
                publish[calls / 2],
                publish[calls - 1],
                answered,
                2 * calls));
        Bench.log("S1 hostile %d: %d of %d answered", n, answered, 2 * calls);
      } finally {
        for (Socket s : hostile) {
          s.close();
        }
      }
    }
    return out.toString();
  }

  /** What a call that got no 2xx answer within 10 s counts as, in milliseconds. */
  private static final double NO_ANSWER = 10_000;

  /** Milliseconds to a 2xx answer, or {@link #NO_ANSWER}. */
  private static double timed(HttpRequest.Builder request)
      throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    try {
      HttpResponse<Void> r =
          HTTP.send(
              request.timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.discarding());
      return r.statusCode() / 100 == 2 ? (System.nanoTime() - t0) / 1e6 : NO_ANSWER;
    } catch (java.net.http.HttpTimeoutException e) {
      return NO_ANSWER;
    }
  }
}
