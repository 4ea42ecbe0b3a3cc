package io.boxline.server.internal;

import io.boxline.Boxline;
import io.boxline.Event;
import io.boxline.EventQuery;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import java.io.IOException;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Where a tail stands in its topic and which events it passes on: one per open tail, the same for
 * server-sent events ({@link ProduceApi}) and WebSocket ({@link WebSocketApi}). A position lists
 * each partition read so far ({@code 0:17,3:5}); a client resumes with it. No cursor moves.
 */
final class TailCursor {
  private static final int PAGE = 500;

  final TopicName topic;
  final String key;
  final String type;
  final boolean raw;
  private final long[] positions;

  /** An event to send, with the tail's position just after it. */
  interface Sink {
    void send(Event event, String position) throws IOException;
  }

  private TailCursor(TopicName topic, long[] positions, String key, String type, boolean raw) {
    this.topic = topic;
    this.positions = positions;
    this.key = key;
    this.type = type;
    this.raw = raw;
  }

  /**
   * The tail the request asks for: from {@code resume} (a position) when given, else from {@code
   * from} (earliest or latest, the default), filtered by {@code key} and {@code type}; 400 when a
   * parameter is amiss, 404 when the topic does not exist.
   *
   * @param resumeHint how this kind of tail resumes, for the error message
   */
  static TailCursor open(
      Boxline boxline, Call c, TopicName topic, String resume, String resumeHint) {
    TopicInfo info =
        boxline
            .admin()
            .topic(topic)
            .orElseThrow(() -> ApiException.notFound("topic " + topic + " does not exist"));
    long[] positions = new long[info.partitions()];
    String from = c.query("from").orElse("latest");
    if (resume != null && !resume.isEmpty()) {
      parse(resume, positions);
    } else if (from.equals("latest")) {
      List<Long> heads = boxline.admin().topicState(topic).heads();
      for (int p = 0; p < positions.length; p++) {
        positions[p] = heads.get(p);
      }
    } else if (!from.equals("earliest")) {
      throw ApiException.badRequest(
          "from must be earliest or latest (or resume with "
              + resumeHint
              + "), got '"
              + Problems.quote(from)
              + "'");
    }
    return new TailCursor(
        topic,
        positions,
        c.query("key").orElse(null),
        c.query("type").orElse(null),
        AdminApi.rawPayload(c));
  }

  /**
   * Gives the sink every event past the positions that passes the filters, partition by partition,
   * moving the positions as it goes; stops between pages when {@code stop} says so.
   *
   * @return how many events the sink got
   */
  int readNew(Boxline boxline, BooleanSupplier stop, Sink sink) throws IOException {
    List<Long> heads = boxline.admin().topicState(topic).heads();
    int sent = 0;
    for (int p = 0; p < positions.length && !stop.getAsBoolean(); p++) {
      while (heads.get(p) > positions[p]) {
        List<Event> events =
            boxline.admin().events(new EventQuery(topic, p, positions[p], key, null, PAGE));
        if (events.isEmpty()) {
          positions[p] = heads.get(p);
          break;
        }
        for (Event e : events) {
          positions[p] = e.sequence();
          if (type == null || type.equals(e.type())) {
            sink.send(e, position());
            sent++;
          }
        }
        if (events.size() < PAGE && key != null) {
          // Filtered by key: the rest up to the head had other keys.
          positions[p] = Math.max(positions[p], heads.get(p));
        }
      }
    }
    return sent;
  }

  /**
   * How long a quiet tail waits for its topic to grow before it looks anyway: an hour when the
   * store tells this server of every process's appends (the look only bounds a fault), else {@code
   * withoutWakeups}.
   */
  static java.time.Duration lookEvery(Boxline boxline, java.time.Duration withoutWakeups) {
    return boxline.remoteConsumers().hearsEveryAppend()
        ? java.time.Duration.ofHours(1)
        : withoutWakeups;
  }

  /** Where the tail stands: {@code partition:sequence} pairs, {@code 0:0} before any event. */
  String position() {
    StringBuilder sb = new StringBuilder();
    for (int p = 0; p < positions.length; p++) {
      if (positions[p] > 0) {
        if (sb.length() > 0) {
          sb.append(',');
        }
        sb.append(p).append(':').append(positions[p]);
      }
    }
    return sb.length() == 0 ? "0:0" : sb.toString();
  }

  private static void parse(String s, long[] positions) {
    for (String part : s.split(",")) {
      String[] pq = part.trim().split(":");
      try {
        int p = Integer.parseInt(pq[0]);
        long seq = Long.parseLong(pq[1]);
        if (pq.length != 2 || p < 0 || p >= positions.length || seq < 0) {
          throw new IllegalArgumentException();
        }
        positions[p] = seq;
      } catch (RuntimeException e) {
        throw ApiException.badRequest(
            "position '"
                + Problems.quote(s)
                + "' must list partition:sequence pairs such as 0:17,3:5 for partitions 0 to "
                + (positions.length - 1));
      }
    }
  }
}
