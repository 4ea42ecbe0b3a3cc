package io.boxline.spring.boot.lifecycletest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.BoxlineObserver;
import io.boxline.EventType;
import io.boxline.TopicName;
import io.boxline.spring.BoxlineLifecycle;
import io.boxline.spring.BoxlineListener;
import io.boxline.spring.BoxlineListenerRegistrar;
import io.boxline.spring.BoxlineOutbox;
import io.boxline.spring.boot.BoxlineProperties;
import io.boxline.testkit.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.CommandLineRunner;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.ContextRefreshedEvent;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * When the starter starts and stops Boxline in a Boot application on PostgreSQL: built (not
 * started, not migrated) while the beans are created; started, migrated and declared once the
 * context is refreshed, before the {@code @BoxlineListener} consumers; so a {@code
 * CommandLineRunner}, an {@code ApplicationRunner} and a {@code ContextRefreshedEvent} listener
 * publish in their transactions during start-up; closed after the consumers when the context
 * closes.
 */
class StarterLifecycleTest {
  static final TopicName PINGS = TopicName.parse("acme/life/pings");

  public record Ping(String id) {}

  /** What the application saw, and when. */
  static final class Probe {
    final List<String> log = new CopyOnWriteArrayList<>();
    final List<String> pings = new CopyOnWriteArrayList<>();
  }

  private final String schema = BootApps.newName("bxlife");
  private ConfigurableApplicationContext context;

  @AfterEach
  void dropSchema() throws Exception {
    if (context != null) {
      context.close();
    }
    BootApps.admin("drop schema if exists " + schema + " cascade");
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {
    @Bean
    Probe probe() {
      return new Probe();
    }

    @Bean
    EventType<Ping> ping() {
      return EventType.of(Ping.class, "ping", PINGS).key(Ping::id);
    }

    /** Created after Boxline's bean: looks at Boxline and the database then. */
    @Bean
    Object earlyBean(
        Probe probe, Boxline boxline, DataSource dataSource, BoxlineProperties properties) {
      try {
        boxline.admin();
        probe.log.add("bean: boxline started");
      } catch (RuntimeException e) {
        probe.log.add("bean: " + e.getMessage());
      }
      probe.log.add(
          "bean: "
              + new JdbcTemplate(dataSource)
                  .queryForObject(
                      "select count(*) from information_schema.tables where table_schema = ?",
                      Integer.class,
                      properties.getSchema())
              + " tables");
      return new Object();
    }

    /** Boxline's own start and close, against the listeners' state at those moments. */
    @Bean
    BoxlineObserver lifecycleObserver(
        Probe probe, ObjectProvider<BoxlineListenerRegistrar> registrar) {
      return new BoxlineObserver() {
        @Override
        public void started(Boxline boxline) {
          probe.log.add("boxline started, listeners running: " + registrar.getObject().isRunning());
        }

        @Override
        public void closing(Boxline boxline) {
          probe.log.add("boxline closing, listeners running: " + registrar.getObject().isRunning());
        }
      };
    }

    @Bean
    Pings pings(Probe probe) {
      return new Pings(probe);
    }

    @Bean
    ApplicationListener<ContextRefreshedEvent> onRefreshed(Probe probe, BoxlineOutbox outbox) {
      return e -> {
        probe.log.add("context refreshed");
        outbox.inTransaction(() -> outbox.publish(new Ping("context-refreshed")));
      };
    }

    @Bean
    CommandLineRunner commandLineRunner(
        Probe probe,
        BoxlineOutbox outbox,
        BoxlineLifecycle lifecycle,
        BoxlineListenerRegistrar registrar) {
      return args -> {
        probe.log.add(
            "command line runner, boxline running: "
                + lifecycle.isRunning()
                + ", listeners running: "
                + registrar.isRunning());
        outbox.inTransaction(() -> outbox.publish(new Ping("command-line-runner")));
      };
    }

    @Bean
    ApplicationRunner applicationRunner(BoxlineOutbox outbox, PlatformTransactionManager tm) {
      return args ->
          new TransactionTemplate(tm)
              .executeWithoutResult(s -> outbox.publish(new Ping("application-runner")));
    }
  }

  public static class Pings {
    private final Probe probe;

    Pings(Probe probe) {
      this.probe = probe;
    }

    @BoxlineListener(subscription = "pings")
    public void on(Ping ping) {
      probe.pings.add(ping.id());
    }
  }

  @Test
  void boxlineStartsAfterTheBeansBeforeTheListenersAndRunnersAndClosesAfterTheListeners() {
    context =
        BootApps.run(
            App.class,
            WebApplicationType.NONE,
            Map.of(
                "spring.datasource.url", BootApps.SERVER + "postgres",
                "spring.datasource.username", "postgres",
                "boxline.schema", schema,
                "boxline.namespaces[0]", "acme/life",
                "boxline.topics[acme/life/pings].partitions", "2",
                "boxline.subscriptions.pings.topics[0]", "acme/life/pings"));
    Probe probe = context.getBean(Probe.class);
    Boxline boxline = context.getBean(Boxline.class);
    BoxlineLifecycle lifecycle = context.getBean(BoxlineLifecycle.class);
    BoxlineListenerRegistrar registrar = context.getBean(BoxlineListenerRegistrar.class);

    Await.until(
        Duration.ofSeconds(30),
        "the three start-up pings handled",
        () -> List.copyOf(probe.pings),
        seen ->
            seen.containsAll(
                List.of("context-refreshed", "command-line-runner", "application-runner")));
    assertThat(probe.log)
        .containsExactly(
            "bean: call start() on Boxline before using it",
            "bean: 0 tables",
            "boxline started, listeners running: false",
            "context refreshed",
            "command line runner, boxline running: true, listeners running: true");
    assertThat(registrar.consumers()).hasSize(1);

    lifecycle.start(); // idempotent: the same consumers, no second declaration
    assertThat(registrar.consumers()).hasSize(1);

    context.close();
    assertThat(probe.log).last().isEqualTo("boxline closing, listeners running: false");
    assertThat(lifecycle.isRunning()).isFalse();
    assertThat(registrar.consumers()).isEmpty();
    assertThatThrownBy(boxline::admin).hasMessageContaining("closed");
    context.close(); // closing twice is harmless
    lifecycle.stop();
    assertThat(probe.log).last().isEqualTo("boxline closing, listeners running: false");
  }
}
