package io.boxline.testkit.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.fail;

import io.boxline.StoreException;
import io.boxline.ValidationException;
import io.boxline.redis.RedisCoordination;
import io.boxline.spi.CoordinationStore;
import io.boxline.spi.GroupView;
import io.boxline.spi.Lease;
import io.boxline.spi.Member;
import io.boxline.spi.PartitionKey;
import io.boxline.testkit.suite.CoordinationBehaviour;
import io.boxline.testkit.suite.SuiteSupport;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Redis coordination store against the coordination contract, on the Redis at 127.0.0.1:6379,
 * plus what is Redis's own: epochs after Redis lost its data, key layout, scripts Redis forgot, ACL
 * users, settings.
 */
class RedisCoordinationTest extends CoordinationBehaviour {
  private final List<String> prefixes = new ArrayList<>();

  /** Runs after every @AfterEach (the suite's closes the store), so nothing writes afterwards. */
  @RegisterExtension
  final AfterEachCallback deleteKeys = context -> prefixes.forEach(LocalRedis::deleteKeys);

  private String prefix;

  @Override
  protected CoordinationStore newStore() {
    prefix = newPrefix("coord");
    return LocalRedis.store(prefix);
  }

  private String newPrefix(String hint) {
    String p = LocalRedis.newKeyPrefix(hint);
    prefixes.add(p);
    return p;
  }

  private static PartitionKey p(int n) {
    return PartitionKey.of(1, n);
  }

  /** A restart without persistence, as the store sees it: every key of the prefix is gone. */
  @Test
  void epochsKeepGrowingWhenRedisLosesEverything() {
    store.checkIn("g", "a", 1, Duration.ofSeconds(30));
    long first = SuiteSupport.acquire(store, "g", List.of(p(0)), "a")[0];
    assertThat(first).isPositive();
    LocalRedis.deleteKeys(prefix);
    assertThat(LocalRedis.keys(prefix)).isEmpty();
    assertThat(store.view("g").leases()).as("the lease went with Redis's data").isEmpty();
    long second = SuiteSupport.acquire(store, "g", List.of(p(0)), "b")[0];
    assertThat(second).as("clock-based, above the lost epoch").isGreaterThan(first);
    // And it keeps growing from there, released and taken again.
    assertThat(store.release("g", p(0), "b", second)).isTrue();
    assertThat(SuiteSupport.acquire(store, "g", List.of(p(0)), "a")[0]).isGreaterThan(second);
  }

  @Test
  void aGroupsKeysShareOneHashSlotUnderThePrefix() {
    String group = "orders/eu {1}:x";
    store.checkIn(group, "a", 1, Duration.ofSeconds(30));
    SuiteSupport.acquire(store, group, List.of(p(0)), "a");
    store.setPolicy(
        Optional.of(group), Optional.of(io.boxline.GroupPolicy.DEFAULT.withBatchSize(5)));
    List<String> keys = LocalRedis.keys(prefix);
    assertThat(keys).allMatch(k -> k.startsWith(prefix));
    List<String> groupKeys = keys.stream().filter(k -> k.contains("orders")).toList();
    assertThat(groupKeys).hasSize(4); // members, weights, status, leases
    assertThat(groupKeys.stream().map(SlotHash::getSlot).distinct()).hasSize(1);
    // A name with braces and colons neither ends the hash tag early nor meets another group.
    store.checkIn("orders", "b", 1, Duration.ofSeconds(30));
    assertThat(store.liveMembers(group)).containsExactly("a");
    assertThat(store.liveMembers("orders")).containsExactly("b");
  }

  @Test
  void aScriptRedisForgotIsSentAgain() {
    store.checkIn("g", "a", 1, Duration.ofSeconds(30));
    LocalRedis.commands().scriptFlush();
    assertThat(store.checkIn("g", "a", 1, Duration.ofSeconds(30)).members())
        .extracting(Member::id)
        .containsExactly("a");
    assertThat(SuiteSupport.acquire(store, "g", List.of(p(0)), "a")[0]).isPositive();
  }

  @Test
  void timesAreOnRedissClock() {
    List<String> time = LocalRedis.commands().time();
    Instant redisNow =
        Instant.ofEpochSecond(Long.parseLong(time.get(0)), Long.parseLong(time.get(1)) * 1000);
    store.checkIn("g", "a", 1, Duration.ofSeconds(30));
    SuiteSupport.acquire(store, "g", List.of(p(0)), "a");
    GroupView v = store.view("g");
    assertThat(Duration.between(redisNow, v.now()).abs()).isLessThan(Duration.ofSeconds(5));
    Member a = v.members().get(0);
    assertThat(Duration.between(a.lastCheckIn(), a.deadline())).isEqualTo(Duration.ofSeconds(30));
    Lease l = v.leases().get(0);
    assertThat(l.since()).isBetween(redisNow.minusSeconds(1), v.now());
  }

  /**
   * A user that may touch only the prefix, with the documented commands: the scripts' keys are all
   * under it, and a key outside it is refused with the hint.
   */
  @Test
  void worksAsAnAclUserLimitedToThePrefixAndNamesAWrongPassword() {
    String user = "boxline-test-" + UUID.randomUUID().toString().substring(0, 8);
    String pattern = "~" + prefix + "*";
    // The permissions the guide names (docs/guide/groups.md), and no more.
    LocalRedis.acl(
        "SETUSER",
        user,
        "on",
        ">s3cret",
        "resetkeys",
        pattern,
        "-@all",
        "+@read",
        "+@write",
        "+@scripting",
        "+time",
        "+@connection");
    try {
      try (RedisCoordination limited =
          RedisCoordination.builder()
              .uri("redis://" + user + ":s3cret@127.0.0.1:6379")
              .keyPrefix(prefix)
              .build()) {
        assertThat(limited.describe()).contains("redis://127.0.0.1:6379").doesNotContain("s3cret");
        limited.checkIn("g", "a", 1, Duration.ofSeconds(30));
        assertThat(SuiteSupport.acquire(limited, "g", List.of(p(0)), "a")[0]).isPositive();
        limited.setPolicy(Optional.of("g"), Optional.of(io.boxline.GroupPolicy.DEFAULT));
        assertThat(limited.view("g").leases()).hasSize(1);
        // Every other script and read, under the same permissions.
        assertThat(limited.policy("g")).isEqualTo(io.boxline.GroupPolicy.DEFAULT);
        assertThat(limited.renew("g", List.of("a"), Duration.ofSeconds(30))).isEqualTo(1);
        assertThat(limited.liveMembers("g")).containsExactly("a");
        long epoch = limited.view("g").leases().get(0).epoch();
        assertThat(limited.markReleasing("g", p(0), "a", epoch)).isTrue();
        assertThat(limited.release("g", p(0), "a", epoch)).isTrue();
        SuiteSupport.acquire(limited, "g", List.of(p(1), p(2)), "a");
        assertThat(limited.forceRelease("g", List.of(p(1)))).isEqualTo(1);
        assertThat(limited.reclaim("g", java.util.Set.of(), Duration.ofMinutes(1))).isEqualTo(1);
        limited.leave("g", "a");
        assertThat(limited.liveMembers("g")).isEmpty();
      }
      try (RedisCoordination outside =
          RedisCoordination.builder()
              .uri("redis://" + user + ":s3cret@127.0.0.1:6379")
              .keyPrefix(newPrefix("outside")) // nothing is written there: refused
              .build()) {
        assertThatThrownBy(() -> outside.checkIn("g", "a", 1, Duration.ofSeconds(30)))
            .isInstanceOf(StoreException.class)
            .hasMessageContaining("+@read +@write +@scripting +time");
      }
      try (RedisCoordination wrong =
          RedisCoordination.builder()
              .uri("redis://" + user + ":guess@127.0.0.1:6379")
              .keyPrefix(prefix)
              .build()) {
        assertThatThrownBy(() -> wrong.liveMembers("g"))
            .isInstanceOf(StoreException.class)
            .hasMessageContaining("redis://127.0.0.1:6379")
            .hasMessageContaining("liveMembers(group g)")
            .hasMessageContaining("put the credentials in the uri")
            .hasMessageNotContaining("guess");
      }
    } finally {
      LocalRedis.commands().aclDeluser(user);
    }
  }

  @Test
  void anUnreachableServerFailsEachCallNamingIt() {
    try (RedisCoordination down =
        RedisCoordination.builder()
            .uri("redis://127.0.0.1:1")
            .timeout(Duration.ofSeconds(2))
            .build()) {
      assertThatThrownBy(() -> down.checkIn("g", "a", 1, Duration.ofSeconds(30)))
          .isInstanceOf(StoreException.class)
          .hasMessageContaining("redis://127.0.0.1:1")
          .hasMessageContaining("checkIn(group g, member a)")
          .hasMessageContaining("is Redis running");
    }
  }

  @Test
  void closeIsIdempotentAndAClosedStoreSaysSo() {
    store.checkIn("g", "a", 1, Duration.ofSeconds(30));
    store.close();
    store.close();
    assertThatThrownBy(() -> store.view("g"))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("closed");
  }

  @Test
  void settingsAreCheckedAndNameTheFix() {
    assertThatThrownBy(() -> RedisCoordination.builder().build())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining(".uri(\"redis://127.0.0.1:6379\")");
    assertThatThrownBy(() -> RedisCoordination.builder().uri("http://127.0.0.1:6379"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("redis://");
    assertThatThrownBy(() -> RedisCoordination.builder().uri("redis-sentinel://h:26379"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("#mymaster");
    assertThatThrownBy(() -> RedisCoordination.builder().uri("rediss://:pw@"))
        .isInstanceOf(ValidationException.class)
        .hasMessageNotContaining("pw");
    assertThatThrownBy(() -> RedisCoordination.builder().keyPrefix("boxline"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("keyPrefix must end with ':'")
        .hasMessageContaining("'boxline:'");
    assertThatThrownBy(() -> RedisCoordination.builder().keyPrefix("a{b}:"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("hash tags");
    assertThatThrownBy(() -> RedisCoordination.builder().keyPrefix(""))
        .isInstanceOf(ValidationException.class);
    assertThatThrownBy(() -> RedisCoordination.builder().timeout(Duration.ZERO))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("timeout");
    assertThatThrownBy(() -> store.checkIn("", "a", 1, Duration.ofSeconds(1)))
        .isInstanceOf(ValidationException.class);
    assertThatThrownBy(() -> store.checkIn("g", "a", 1, Duration.ZERO))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("ttl");
    RedisCoordination s =
        RedisCoordination.builder()
            .uri("redis://:hunter2@127.0.0.1:6379/3?timeout=10s")
            .keyPrefix("app:")
            .build();
    assertThat(s.describe())
        .isEqualTo("Redis coordination (redis://127.0.0.1:6379/3, prefix app:)")
        .doesNotContain("hunter2");
    s.close();
  }

  /**
   * The Redis at 127.0.0.1:6379 (no password), shared by the Redis tests; each test isolates itself
   * with a key prefix of its own and deletes its keys afterwards. Without it the tests fail, never
   * skip, and say how to start it.
   */
  static final class LocalRedis {
    static final String URI = "redis://127.0.0.1:6379";
    static final String START =
        "redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save \"\""
            + " --appendonly no";

    private static StatefulRedisConnection<String, String> connection;

    private LocalRedis() {}

    static RedisCoordination store(String prefix) {
      commands(); // fails with the way to start Redis when it is not there
      return RedisCoordination.builder().uri(URI).keyPrefix(prefix).build();
    }

    /** e.g. {@code boxline-test:coord-1a2b3c4d:} */
    static String newKeyPrefix(String hint) {
      String clean = hint.toLowerCase().replaceAll("[^a-z0-9]", "");
      if (clean.length() > 24) {
        clean = clean.substring(0, 24);
      }
      return "boxline-test:" + clean + "-" + UUID.randomUUID().toString().substring(0, 8) + ":";
    }

    /** A connection of the tests' own, for looking at and deleting keys. */
    static synchronized RedisCommands<String, String> commands() {
      if (connection == null) {
        requireRunning();
        RedisClient client = RedisClient.create(URI);
        connection = client.connect(StringCodec.UTF8);
        Runtime.getRuntime()
            .addShutdownHook(new Thread(client::shutdown, "boxline-test-redis-close"));
      }
      return connection.sync();
    }

    private static void requireRunning() {
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress("127.0.0.1", 6379), 2000);
      } catch (IOException e) {
        fail(
            "Redis is not reachable at 127.0.0.1:6379 ("
                + e.getMessage()
                + "). The Redis coordination tests need it (they never skip); start it with: "
                + START);
      }
    }

    static List<String> keys(String prefix) {
      List<String> out = new ArrayList<>();
      RedisCommands<String, String> c = commands();
      ScanArgs match = ScanArgs.Builder.matches(prefix + "*").limit(1000);
      KeyScanCursor<String> page = c.scan(match);
      out.addAll(page.getKeys());
      while (!page.isFinished()) {
        page = c.scan(ScanCursor.of(page.getCursor()), match);
        out.addAll(page.getKeys());
      }
      return out;
    }

    /** SCAN and UNLINK on the prefix. */
    static void deleteKeys(String prefix) {
      List<String> keys = keys(prefix);
      if (!keys.isEmpty()) {
        commands().unlink(keys.toArray(String[]::new));
      }
    }

    /** An ACL command Lettuce has no typed method for with these arguments. */
    static void acl(String... args) {
      CommandArgs<String, String> a = new CommandArgs<>(StringCodec.UTF8);
      for (String x : args) {
        a.add(x);
      }
      commands().dispatch(CommandType.ACL, new StatusOutput<>(StringCodec.UTF8), a);
    }
  }
}
