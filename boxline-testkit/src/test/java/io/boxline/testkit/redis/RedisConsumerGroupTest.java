package io.boxline.testkit.redis;

import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.TestDatabase;
import io.boxline.testkit.redis.RedisCoordinationTest.LocalRedis;
import io.boxline.testkit.suite.ConsumerGroupBehaviour;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Consumer groups coordinated in Redis, log and cursors in PostgreSQL. */
class RedisConsumerGroupTest extends ConsumerGroupBehaviour {
  private String prefix;

  /**
   * Runs after every @AfterEach: the suite's closes Boxline (its consumers leave the group) before
   * the keys go, so no check-in writes them again.
   */
  @RegisterExtension
  final AfterEachCallback deleteKeys =
      context -> {
        if (prefix != null) {
          LocalRedis.deleteKeys(prefix);
        }
      };

  @Override
  protected TestDatabase newDatabase(String hint) {
    return TestDatabase.create(hint, 24);
  }

  @Override
  protected CoordinationStore newCoordination(TestDatabase db) {
    prefix = LocalRedis.newKeyPrefix(db.schema());
    return LocalRedis.store(prefix);
  }
}
