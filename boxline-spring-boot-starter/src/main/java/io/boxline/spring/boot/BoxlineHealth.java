package io.boxline.spring.boot;

import io.boxline.Boxline;
import io.boxline.PartitionLag;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.context.SmartLifecycle;

/**
 * Boxline's health, independent of the actuator's API (whose package differs between Boot 3 and 4):
 * UP when started and the database answers; OUT_OF_SERVICE from the moment the context starts
 * stopping; DOWN when not started, when the database does not answer, or when a subscription's
 * oldest unhandled event waited longer than {@code boxline.health.max-lag-age}.
 */
public class BoxlineHealth implements SmartLifecycle {
  /** Stops first of Boxline's lifecycle beans, so health turns OUT_OF_SERVICE at once. */
  public static final int PHASE = Integer.MAX_VALUE - 1;

  /** A status and its details. */
  public record Report(String status, Map<String, Object> details) {}

  private final Boxline boxline;
  private final Duration maxLagAge;
  private volatile boolean running;
  private volatile boolean stopping;

  public BoxlineHealth(Boxline boxline, Duration maxLagAge) {
    this.boxline = boxline;
    this.maxLagAge = maxLagAge;
  }

  public Report check() {
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("instance", boxline.instanceId());
    if (stopping) {
      return new Report("OUT_OF_SERVICE", details);
    }
    if (!running) {
      details.put("reason", "not started");
      return new Report("DOWN", details);
    }
    Map<String, List<PartitionLag>> lag;
    try {
      details.put("outboxBacklog", boxline.admin().outboxBacklog().events());
      lag = boxline.admin().lagBySubscription();
    } catch (RuntimeException e) {
      details.put("error", e.getMessage());
      return new Report("DOWN", details);
    }
    Instant now = Instant.now();
    Map<String, Object> ages = new LinkedHashMap<>();
    String status = "UP";
    for (Map.Entry<String, List<PartitionLag>> s : lag.entrySet()) {
      Duration oldest = Duration.ZERO;
      long backlog = 0;
      for (PartitionLag p : s.getValue()) {
        backlog += p.backlog();
        if (p.oldestUnhandledAt() != null) {
          Duration age = Duration.between(p.oldestUnhandledAt(), now);
          oldest = age.compareTo(oldest) > 0 ? age : oldest;
        }
      }
      ages.put(s.getKey(), Map.of("backlog", backlog, "oldestUnhandledMs", oldest.toMillis()));
      if (maxLagAge != null && oldest.compareTo(maxLagAge) > 0) {
        status = "DOWN";
        details.put("lagging", s.getKey() + " waits " + oldest.toMillis() + " ms > " + maxLagAge);
      }
    }
    details.put("subscriptions", ages);
    return new Report(status, details);
  }

  @Override
  public void start() {
    running = true;
    stopping = false;
  }

  @Override
  public void stop() {
    stopping = true;
    running = false;
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }
}
