package io.boxline.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a bean method a consumer of a subscription, started with the application context and
 * stopped (its in-flight batch finished) before Boxline and the data source.
 *
 * <p>The parameters say how events arrive:
 *
 * <ul>
 *   <li>{@code (Event)} — the raw event; {@code (OrderPlaced)} — the payload decoded with its
 *       registered {@code EventType}'s codec, else as JSON; {@code (OrderPlaced, Event)} — both;
 *   <li>{@code (List<Event>)} or {@code (List<OrderPlaced>)} — a batch (one partition, in order);
 *   <li>with {@link #transactional()}: the call runs in the transaction that moves the cursor, so
 *       that what it writes through the same data source ({@code JdbcTemplate}, jOOQ,
 *       {@code @Transactional} code) commits with it exactly once; a {@code java.sql.Connection}
 *       parameter receives that transaction.
 * </ul>
 *
 * <p>Throwing fails the event: the retry policy applies ({@code HandlerDecision} exceptions decide
 * explicitly). Zero or empty attributes take the defaults of the application's configuration.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface BoxlineListener {
  /** The subscription (it must exist when the context starts; declare it in configuration). */
  String subscription();

  /** The consumer's id in the group; empty: Boxline's instance id with a suffix. */
  String id() default "";

  /** Events per batch; 0: the default. */
  int batchSize() default 0;

  /** Worker threads (partitions handled at once); 0: the default. */
  int concurrency() default 0;

  /** Keys of one partition handled at once (each key in order); 0: off. */
  int parallelByKey() default 0;

  /** Attempts before an event is dead-lettered; 0: the retry policy's default. */
  int maxAttempts() default 0;

  /**
   * A batch still running after this long is interrupted and counts as a failed attempt, in
   * Spring's duration format ({@code 30s}, {@code PT30S}); empty: no timeout.
   */
  String handlerTimeout() default "";

  /** Runs the call in the cursor's transaction (exactly-once effects; see the class comment). */
  boolean transactional() default false;

  /** Whether the consumer starts with the context. */
  boolean autoStartup() default true;
}
