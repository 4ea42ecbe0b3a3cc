package io.boxline.spi;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * What a member reports of itself at every check-in, for operators: where it runs and which handler
 * calls it is in. The engine's own decisions never read it. Stores keep it as the short text of
 * {@link #encode()} (one line per field) so that it fits a column or an etcd value.
 *
 * @param host the machine's host name, or null when unknown
 * @param process the process ({@code pid@host}, or what the member says), or null when unknown
 * @param running the handler calls in progress at the check-in, oldest first, at most {@link
 *     #MAX_RUNNING}
 */
public record MemberStatus(String host, String process, List<Running> running) {

  /** A member that reports nothing (remote members, stores written by an older version). */
  public static final MemberStatus UNKNOWN = new MemberStatus(null, null, List.of());

  /** Calls reported at most per check-in; the oldest ones, which are the ones worth seeing. */
  public static final int MAX_RUNNING = 16;

  private static final int MAX_TEXT = 200;

  public MemberStatus {
    host = clean(host);
    process = clean(process);
    running =
        running == null
            ? List.of()
            : List.copyOf(running.subList(0, Math.min(running.size(), MAX_RUNNING)));
  }

  /**
   * One handler call in progress.
   *
   * @param fromSequence the first event's sequence
   * @param toSequence the last event's sequence (the same for a call with one event)
   * @param events how many events the call handles
   * @param startedAt when the call began, on the member's clock
   */
  public record Running(
      long topicId,
      int partition,
      long fromSequence,
      long toSequence,
      int events,
      Instant startedAt) {}

  /** The status as stored: {@code v1}, host, process, then a line per running call. */
  public String encode() {
    StringBuilder b = new StringBuilder("v1\n");
    b.append(host == null ? "" : host).append('\n');
    b.append(process == null ? "" : process);
    for (Running r : running) {
      b.append('\n')
          .append(r.topicId())
          .append(' ')
          .append(r.partition())
          .append(' ')
          .append(r.fromSequence())
          .append(' ')
          .append(r.toSequence())
          .append(' ')
          .append(r.events())
          .append(' ')
          .append(r.startedAt().toEpochMilli());
    }
    return b.toString();
  }

  /**
   * Reads what {@link #encode()} wrote; {@link #UNKNOWN} for null or text it does not recognise (a
   * status is for display, so a damaged one is shown as unknown rather than failing a read).
   */
  public static MemberStatus decode(String text) {
    if (text == null || !text.startsWith("v1\n")) {
      return UNKNOWN;
    }
    String[] lines = text.split("\n", -1);
    if (lines.length < 3) {
      return UNKNOWN;
    }
    List<Running> running = new ArrayList<>();
    try {
      for (int i = 3; i < lines.length; i++) {
        String[] f = lines[i].split(" ");
        running.add(
            new Running(
                Long.parseLong(f[0]),
                Integer.parseInt(f[1]),
                Long.parseLong(f[2]),
                Long.parseLong(f[3]),
                Integer.parseInt(f[4]),
                Instant.ofEpochMilli(Long.parseLong(f[5]))));
      }
    } catch (RuntimeException e) {
      return new MemberStatus(lines[1], lines[2], List.of());
    }
    return new MemberStatus(lines[1], lines[2], running);
  }

  private static String clean(String s) {
    if (s == null || s.isBlank()) {
      return null;
    }
    String one = s.replace('\n', ' ').replace('\r', ' ').strip();
    return one.length() <= MAX_TEXT ? one : one.substring(0, MAX_TEXT);
  }
}
