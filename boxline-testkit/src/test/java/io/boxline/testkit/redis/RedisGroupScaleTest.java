package io.boxline.testkit.redis;

import io.boxline.spi.CoordinationStore;
import io.boxline.testkit.redis.RedisCoordinationTest.LocalRedis;
import io.boxline.testkit.suite.GroupScaleBehaviour;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * 1,024 members through the Redis coordination store, on the Redis at 127.0.0.1:6379, with Redis's
 * own count of what it did ({@code INFO commandstats}; the whole server's, so anything else using
 * it meanwhile counts too).
 */
class RedisGroupScaleTest extends GroupScaleBehaviour {
  private String prefix;

  /** Runs after the suite's @AfterEach (which closes the store), so nothing writes afterwards. */
  @RegisterExtension
  final AfterEachCallback deleteKeys =
      context -> {
        if (prefix != null) {
          LocalRedis.deleteKeys(prefix);
        }
      };

  @Override
  protected CoordinationStore newStore() {
    prefix = LocalRedis.newKeyPrefix("scale");
    return LocalRedis.store(prefix);
  }

  @Override
  protected String storeName() {
    return "Redis";
  }

  /**
   * {@code commands}: every command Redis ran (but INFO), the scripts' own included; {@code
   * evalsha}: the scripts called (a check-in is one, sent with a GET of the policy stamp); {@code
   * evalsha-usec}: Redis's time in them.
   */
  @Override
  protected Map<String, Long> serverCounters() {
    Map<String, Long> out = new TreeMap<>();
    long commands = 0;
    for (String line : LocalRedis.commands().info("commandstats").split("\r?\n")) {
      if (!line.startsWith("cmdstat_")) {
        continue;
      }
      String name = line.substring("cmdstat_".length(), line.indexOf(':'));
      if (name.equals("info")) {
        continue; // this very reading
      }
      long calls = field(line, "calls=");
      commands += calls;
      if (name.equals("evalsha")) {
        out.put("evalsha", calls);
        out.put("evalsha-usec", field(line, "usec="));
      }
    }
    out.put("commands", commands);
    return out;
  }

  private static long field(String line, String name) {
    int at = line.indexOf(name) + name.length();
    int end = line.indexOf(',', at);
    return Long.parseLong(line.substring(at, end < 0 ? line.length() : end));
  }
}
