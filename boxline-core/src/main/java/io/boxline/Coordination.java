package io.boxline;

import io.boxline.internal.InMemoryCoordination;
import io.boxline.spi.CoordinationStore;
import java.time.Clock;

/**
 * Factories for the coordination stores that ship with core. The database store comes from the
 * store.
 */
public final class Coordination {
  private Coordination() {}

  /**
   * Coordination inside one JVM, for tests and embedded use: every consumer of a subscription must
   * use the same instance. Cursors stay in the database, so delivery guarantees are unchanged.
   */
  public static CoordinationStore inMemory() {
    return new InMemoryCoordination(Clock.systemUTC());
  }

  public static CoordinationStore inMemory(Clock clock) {
    return new InMemoryCoordination(clock);
  }
}
