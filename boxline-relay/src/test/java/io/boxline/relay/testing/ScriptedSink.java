package io.boxline.relay.testing;

import io.boxline.Event;
import io.boxline.relay.Sink;
import io.boxline.relay.SinkException;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * An in-memory sink for relay tests: records what it "confirms" into an {@link OrderCheck}, can be
 * switched down (every send fails retryably) and can reject chosen events for good or fail them
 * retryably forever.
 */
public final class ScriptedSink implements Sink {
  private final OrderCheck check = new OrderCheck();
  private final AtomicBoolean down = new AtomicBoolean();
  private final AtomicInteger sends = new AtomicInteger();
  private final AtomicInteger failedSends = new AtomicInteger();
  private final AtomicInteger closes = new AtomicInteger();
  private volatile Predicate<Event> reject = e -> false;
  private volatile Predicate<Event> failForever = e -> false;

  public OrderCheck check() {
    return check;
  }

  public void down(boolean isDown) {
    down.set(isDown);
  }

  public void reject(Predicate<Event> which) {
    this.reject = which;
  }

  public void failForever(Predicate<Event> which) {
    this.failForever = which;
  }

  public int sends() {
    return sends.get();
  }

  public int failedSends() {
    return failedSends.get();
  }

  public int closes() {
    return closes.get();
  }

  @Override
  public void send(List<Event> events) {
    sends.incrementAndGet();
    if (down.get()) {
      failedSends.incrementAndGet();
      throw SinkException.retryable(events, "scripted outage", null);
    }
    SinkException.Builder failure = SinkException.builder();
    boolean stopped = false;
    for (Event e : events) {
      if (stopped) {
        failure.retryable(e, "not sent after an earlier failure");
      } else if (reject.test(e)) {
        failure.permanent(e, "scripted rejection of " + e.key());
      } else if (failForever.test(e)) {
        failure.retryable(e, "scripted lasting failure of " + e.key());
        stopped = true;
      } else {
        check.record(e.id().toString(), e.key(), e.sequence());
      }
    }
    if (!failure.isEmpty()) {
      failedSends.incrementAndGet();
      throw failure.build();
    }
  }

  @Override
  public String name() {
    return "scripted";
  }

  @Override
  public void close() {
    closes.incrementAndGet();
  }
}
