package io.boxline.client;

import io.boxline.Admin;
import io.boxline.client.internal.DefaultBoxlineClient;
import java.time.Duration;
import java.util.Objects;

/**
 * A Boxline server's HTTP API ({@code boxline-server}) from any JVM application: the admin API as
 * the library's own {@link Admin}, publishing, dead letters and members of a consumer group.
 *
 * <pre>{@code
 * try (BoxlineClient client =
 *     BoxlineClient.builder().url("https://boxline.internal:8080").token(token).build()) {
 *   client.admin().createTopic(TopicName.parse("acme/billing/orders"), 4, Sequencing.SEQUENCER);
 *   client.publisher().publish(OutgoingEvent.builder(topic).type("OrderPlaced").payload(bytes).build());
 * }
 * }</pre>
 *
 * <p>Every call is one or a few blocking HTTP requests; the client is thread-safe. Failures throw
 * Boxline's exceptions: {@link io.boxline.NotFoundException} (404), {@link
 * io.boxline.ValidationException} (400, 413), {@link io.boxline.PartitionsFencedException} (a
 * settle refused with 409), {@link UnauthorizedException} (401), {@link ForbiddenException} (403),
 * {@link ConflictException} (another 409), {@link CannotConnectException} (no answer) and {@link
 * ServerException} for the rest; {@link ServerException#of} gives the HTTP status, the server's
 * error code and URL of any of them. The token is sent, never part of a message.
 */
public interface BoxlineClient extends AutoCloseable {

  /** A builder; {@link Builder#url} is required. */
  static Builder builder() {
    return new Builder();
  }

  /** The server's base URL (without a trailing slash), as messages name it. */
  String url();

  /**
   * The admin API: namespaces, topics, subscriptions, groups, lag, events, retries, retention and
   * group policies, read back into the records the library returns. Lists show what the token's
   * namespaces cover. {@link Admin#blockedTasks()} and {@link Admin#inboxSizes()} are not offered
   * over HTTP: they throw {@link UnsupportedOperationException}.
   */
  Admin admin();

  /** Publishing: one request per batch, stored in one transaction. */
  RemotePublisher publisher();

  /** Dead letters: list, reasons, count, redrive, discard. */
  RemoteDeadLetters deadLetters();

  /** Members of subscriptions' consumer groups: fetch, settle, leave. */
  RemoteMembers members();

  /**
   * Who the token is ({@code GET /v1/whoami}): checks that the server answers and knows the token.
   */
  Caller whoami();

  /**
   * Releases the client; calls after it throw {@link IllegalStateException}. Safe to call twice.
   */
  @Override
  void close();

  /**
   * The caller the server sees.
   *
   * @param name the token's name in the server's config
   * @param role its role: admin, operator, producer, consumer or viewer
   */
  record Caller(String name, String role) {}

  /** Builds a {@link BoxlineClient}. */
  final class Builder {
    private String url;
    private String token;
    private Duration connectTimeout = Duration.ofSeconds(10);
    private Duration requestTimeout = Duration.ofMinutes(5);
    private String userAgent;

    private Builder() {}

    /** The server's base URL, {@code http://} or {@code https://} (a trailing slash is dropped). */
    public Builder url(String url) {
      this.url = Objects.requireNonNull(url, "url");
      return this;
    }

    /**
     * The bearer token ({@code Authorization: Bearer …}); null or blank sends none (a server with
     * {@code auth.disabled}).
     */
    public Builder token(String token) {
      this.token = token;
      return this;
    }

    /** How long to wait for a connection; default 10 s. */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connectTimeout");
      return this;
    }

    /**
     * How long to wait for an answer; default 5 min. A member's fetch waits this plus its own wait.
     */
    public Builder requestTimeout(Duration timeout) {
      this.requestTimeout = positive(timeout, "requestTimeout");
      return this;
    }

    /**
     * A product token sent before the client's own in {@code User-Agent}, e.g. {@code billing/2.3}:
     * the server's access log shows {@code billing/2.3 boxline-java/<version>}.
     */
    public Builder userAgent(String product) {
      this.userAgent = product == null || product.isBlank() ? null : product.strip();
      return this;
    }

    /**
     * The client; nothing is sent yet.
     *
     * @throws IllegalArgumentException when the URL is not an http(s) URL with a host
     */
    public BoxlineClient build() {
      if (url == null) {
        throw new IllegalArgumentException(
            "url is required: the server's base URL, e.g. http://host:8080");
      }
      return new DefaultBoxlineClient(url, token, connectTimeout, requestTimeout, userAgent);
    }

    private static Duration positive(Duration d, String name) {
      Objects.requireNonNull(d, name);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, got " + d);
      }
      return d;
    }
  }
}
