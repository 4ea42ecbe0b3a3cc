package io.boxline.client.internal;

import static io.boxline.client.internal.HttpTransport.query;

import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.EventPosition;
import io.boxline.client.RemoteDeadLetters;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@link io.boxline.DeadLetters} over a Boxline server: list pages through {@code GET
 * …/dead-letters}; redrive and discard send the query's filters to {@code POST
 * …/dead-letters/redrive|discard}, which act in one call as the library does.
 */
final class HttpDeadLetters implements RemoteDeadLetters {
  private final HttpTransport server;

  HttpDeadLetters(HttpTransport server) {
    this.server = server;
  }

  /** The query's filters by the server's names; without the limit. */
  static Map<String, Object> filters(DeadLetterQuery q) {
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("topic", q.topic() == null ? null : q.topic().toString());
    f.put("type", q.type());
    f.put("key", q.key());
    f.put("eventId", q.eventId() == null ? null : q.eventId().toString());
    f.put("error", q.errorContains());
    f.put("deadBefore", q.deadBefore() == null ? null : q.deadBefore().toString());
    f.put("deadAfter", q.deadAfter() == null ? null : q.deadAfter().toString());
    f.put("after", q.after() == null ? null : q.after().toString());
    f.values().removeIf(v -> v == null);
    return f;
  }

  private static String path(DeadLetterQuery q) {
    return HttpAdmin.subscriptionPath(q.subscription()) + "/dead-letters";
  }

  @Override
  public List<DeadLetter> list(DeadLetterQuery q) {
    List<DeadLetter> out = new ArrayList<>();
    Map<String, Object> f = filters(q);
    while (out.size() < q.limit()) {
      int want = Math.min(HttpAdmin.LIST_PAGE, q.limit() - out.size());
      f.put("limit", want);
      f.put("payload", "base64");
      List<DeadLetter> page =
          Views.list(server.get(path(q) + query(f)).get("deadLetters"), Views::deadLetter);
      out.addAll(page);
      if (page.size() < want) {
        break;
      }
      f.put("after", EventPosition.of(page.get(page.size() - 1).event()).toString());
    }
    return out;
  }

  @Override
  public List<io.boxline.DeadLetterReason> reasons(String subscription, int limit) {
    return Views.list(
        server
            .get(
                HttpAdmin.subscriptionPath(subscription)
                    + "/dead-letters/reasons"
                    + query(Map.of("limit", limit)))
            .get("reasons"),
        Views::deadLetterReason);
  }

  @Override
  public int count(DeadLetterQuery q) {
    return act(q, "redrive", true);
  }

  @Override
  public int redrive(DeadLetterQuery q) {
    return act(q, "redrive", false);
  }

  @Override
  public int discard(DeadLetterQuery q) {
    return act(q, "discard", false);
  }

  private int act(DeadLetterQuery q, String action, boolean dryRun) {
    Map<String, Object> body = filters(q);
    body.put("limit", q.limit());
    body.put("dryRun", dryRun);
    return server.post(path(q) + "/" + action, body).path("affected").asInt();
  }
}
