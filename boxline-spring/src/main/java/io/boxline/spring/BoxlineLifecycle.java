package io.boxline.spring;

import io.boxline.Boxline;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import org.springframework.context.SmartLifecycle;

/**
 * Starts a {@link Boxline} that a {@code @Bean} method built (not started) once the context is
 * refreshed, and closes it when the context closes, as db-scheduler's starter does with its
 * scheduler:
 *
 * <pre>{@code
 * @Bean(destroyMethod = "close")
 * Boxline boxline(DataSource ds) {
 *   return Boxline.builder().store(JdbcStore.builder(ds).build()).build(); // not started
 * }
 *
 * @Bean
 * BoxlineLifecycle boxlineLifecycle(Boxline boxline) {
 *   return new BoxlineLifecycle(boxline);
 * }
 * }</pre>
 *
 * <p>{@link #start()} runs when the context is refreshed, in phase {@link #PHASE}: before the
 * {@link BoxlineListenerRegistrar} starts the {@code @BoxlineListener} consumers and before a web
 * server takes requests, after every singleton exists. It starts Boxline (which migrates the schema
 * unless built with {@code migrate(false)}), then runs the {@code afterStart} step (the Boot
 * starter creates the declared namespaces, topics and subscriptions there). Publishing needs a
 * started Boxline, so code that publishes while the context starts must run after this: a {@code
 * CommandLineRunner}, an {@code ApplicationRunner}, a listener of {@code ContextRefreshedEvent} or
 * {@code ApplicationReadyEvent} all do; a {@code @PostConstruct} method does not.
 *
 * <p>{@link #stop()} runs when the context closes, after the consumers stopped (the registrar's
 * phase is higher) and before the data source is destroyed. It closes Boxline and waits at most the
 * stop timeout for it; when Boxline takes longer the context goes on closing and a warning says so.
 * Start is idempotent; stopping twice closes once. A context stopped with {@code
 * ConfigurableApplicationContext.stop()} closed its Boxline, which cannot start again: starting the
 * context again fails with a message that says so.
 */
public final class BoxlineLifecycle implements SmartLifecycle {
  private static final System.Logger LOG = System.getLogger(BoxlineLifecycle.class.getName());

  /** Starts before the listener registrar and stops after it. */
  public static final int PHASE = BoxlineListenerRegistrar.PHASE - 1024;

  /** Default longest wait for Boxline to close. */
  public static final Duration DEFAULT_STOP_TIMEOUT = Duration.ofSeconds(30);

  private enum State {
    NEW,
    RUNNING,
    CLOSED
  }

  private final Boxline boxline;
  private final Consumer<? super Boxline> afterStart;
  private final Duration stopTimeout;
  private State state = State.NEW;

  /** Starts and stops {@code boxline}, waiting up to {@link #DEFAULT_STOP_TIMEOUT} to close it. */
  public BoxlineLifecycle(Boxline boxline) {
    this(boxline, b -> {}, DEFAULT_STOP_TIMEOUT);
  }

  /**
   * @param boxline the Boxline to start when the context is refreshed and close when it closes
   * @param afterStart runs once after Boxline started, before the consumers start; when it throws,
   *     Boxline is closed and the context's start fails with that exception
   * @param stopTimeout the longest wait for Boxline to close, positive
   */
  public BoxlineLifecycle(
      Boxline boxline, Consumer<? super Boxline> afterStart, Duration stopTimeout) {
    this.boxline = Objects.requireNonNull(boxline, "boxline");
    this.afterStart = Objects.requireNonNull(afterStart, "afterStart");
    this.stopTimeout = Objects.requireNonNull(stopTimeout, "stopTimeout");
    if (stopTimeout.isNegative() || stopTimeout.isZero()) {
      throw new IllegalArgumentException("stopTimeout must be positive, got " + stopTimeout);
    }
  }

  @Override
  public synchronized void start() {
    if (state == State.RUNNING) {
      return;
    }
    if (state == State.CLOSED) {
      throw new IllegalStateException(
          "Boxline "
              + boxline.instanceId()
              + " was closed when the context stopped and cannot start again; close the context"
              + " and create a new one");
    }
    boxline.start();
    try {
      afterStart.accept(boxline);
    } catch (RuntimeException | Error e) {
      state = State.CLOSED;
      try {
        boxline.close();
      } catch (RuntimeException closeFailed) {
        e.addSuppressed(closeFailed);
      }
      throw e;
    }
    state = State.RUNNING;
  }

  @Override
  public void stop() {
    synchronized (this) {
      if (state == State.CLOSED) {
        return;
      }
      state = State.CLOSED;
    }
    closeWithin(stopTimeout);
  }

  /** Closes Boxline on a thread of its own and waits for it at most {@code timeout}. */
  private void closeWithin(Duration timeout) {
    RuntimeException[] failed = new RuntimeException[1];
    Thread closer =
        new Thread(
            () -> {
              try {
                boxline.close();
              } catch (RuntimeException e) {
                failed[0] = e;
              }
            },
            "boxline-close-" + boxline.instanceId());
    closer.setDaemon(true);
    closer.start();
    try {
      closer.join(timeout.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (closer.isAlive()) {
      LOG.log(
          Level.WARNING,
          "Boxline {0} did not close within {1}; the context goes on closing while it finishes",
          boxline.instanceId(),
          timeout);
      return;
    }
    if (failed[0] != null) {
      throw failed[0];
    }
  }

  @Override
  public synchronized boolean isRunning() {
    return state == State.RUNNING;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }

  /** The Boxline this lifecycle starts and stops. */
  public Boxline boxline() {
    return boxline;
  }
}
