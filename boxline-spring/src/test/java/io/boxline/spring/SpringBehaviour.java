package io.boxline.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.boxline.Boxline;
import io.boxline.ConnectionStateException;
import io.boxline.Event;
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.NamespacePath;
import io.boxline.PartitionLag;
import io.boxline.Sequencing;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TaskContext;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import io.boxline.testkit.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * boxline-spring in a plain Spring context (no Boot) on a real database: publishing in the caller's
 * transaction with every propagation that matters, listener and task beans, exactly-once effects of
 * a transactional listener, and shutdown with work in flight.
 */
abstract class SpringBehaviour {
  static final NamespacePath NS = NamespacePath.of("acme/spring");
  static final TopicName ORDERS = TopicName.of(NS, "orders");
  static final TopicName LEDGER = TopicName.of(NS, "ledger");

  /** A typed event; its EventType routes it to ORDERS by customer. */
  public record OrderPlaced(String orderId, String customer, long cents) {}

  /** A typed event of the in-transaction topic LEDGER. */
  public record Booked(String orderId) {}

  public record Email(String to) {}

  static TestDatabase db;

  abstract TestDatabase createDatabase();

  private AnnotationConfigApplicationContext context;

  @BeforeEach
  void start() {
    db = createDatabase();
    context = new AnnotationConfigApplicationContext(Config.class); // migrates the schema
    new JdbcTemplate(db.dataSource())
        .execute(
            "create table "
                + db.table("orders")
                + " (id varchar(40) primary key, customer varchar(40))");
    new JdbcTemplate(db.dataSource())
        .execute(
            "create table "
                + db.table("effects")
                + " (event_id varchar(40) primary key, order_id varchar(40))");
  }

  @AfterEach
  void stop() {
    if (context != null) {
      context.close();
    }
    db.close();
  }

  @Configuration
  @EnableTransactionManagement
  static class Config {
    @Bean(destroyMethod = "") // the test's database owns the pool
    DataSource dataSource() {
      return db.dataSource();
    }

    @Bean
    PlatformTransactionManager transactionManager(DataSource ds) {
      return new DataSourceTransactionManager(ds);
    }

    @Bean
    EventTypes eventTypes() {
      return EventTypes.builder()
          .register(
              EventType.of(OrderPlaced.class, "order.placed", ORDERS).key(OrderPlaced::customer))
          .register(EventType.of(Booked.class, "ledger.booked", LEDGER).key(Booked::orderId))
          .build();
    }

    /** Built, not started: the lifecycle below starts it once the context is refreshed. */
    @Bean(destroyMethod = "close")
    Boxline boxline(DataSource ds, EventTypes types) {
      return Boxline.builder()
          .store(io.boxline.jdbc.JdbcStore.builder(ds).schema(db.schema()).build())
          .eventTypes(types)
          .build();
    }

    /** Starts Boxline (migrating the schema) and creates the topics and subscriptions. */
    @Bean
    BoxlineLifecycle boxlineLifecycle(Boxline boxline) {
      return new BoxlineLifecycle(
          boxline,
          b -> {
            b.admin().createNamespace(NS);
            b.admin().createTopic(ORDERS, 4);
            b.admin().createTopic(LEDGER, 2, Sequencing.IN_TRANSACTION);
            for (String sub : List.of("typed", "batches", "effects")) {
              b.admin()
                  .createSubscription(
                      SubscriptionSpec.of(sub, ORDERS).startAt(StartPosition.earliest()));
            }
            b.admin()
                .createSubscription(
                    SubscriptionSpec.of("ledger", LEDGER).startAt(StartPosition.earliest()));
          },
          Duration.ofSeconds(30));
    }

    @Bean
    BoxlineOutbox outbox(Boxline b, DataSource ds, PlatformTransactionManager tm) {
      return new BoxlineOutbox(b, ds, tm);
    }

    @Bean
    static BoxlineListenerRegistrar registrar() {
      return new BoxlineListenerRegistrar();
    }

    /** Names the consumers of one subscription, to show customizers reach the builder. */
    @Bean
    ConsumerCustomizer namedBatches() {
      return (subscription, consumer) -> {
        if (subscription.equals("batches")) {
          consumer.id("batches-consumer");
        }
      };
    }

    @Bean
    Orders orders(BoxlineOutbox outbox, DataSource ds) {
      return new Orders(outbox, new JdbcTemplate(ds));
    }

    @Bean
    Listeners listeners(DataSource ds) {
      return new Listeners(new JdbcTemplate(ds));
    }
  }

  /** The application's service: business rows and events in one @Transactional method. */
  public static class Orders {
    final BoxlineOutbox outbox;
    final JdbcTemplate jdbc;

    Orders(BoxlineOutbox outbox, JdbcTemplate jdbc) {
      this.outbox = outbox;
      this.jdbc = jdbc;
    }

    @Transactional
    public void place(String id, String customer) {
      jdbc.update("insert into " + db.table("orders") + " values (?, ?)", id, customer);
      outbox.publish(new OrderPlaced(id, customer, 100));
    }

    @Transactional
    public void placeThenFail(String id) {
      place(id, "c");
      throw new IllegalStateException("boom");
    }

    @Transactional(readOnly = true)
    public void placeReadOnly(String id) {
      outbox.publish(new OrderPlaced(id, "c", 1));
    }

    @Transactional(propagation = Propagation.REQUIRES_NEW)
    public void placeInOwnTransaction(String id) {
      outbox.publish(new OrderPlaced(id, "c", 1));
    }

    @Transactional
    public void book(String id) {
      outbox.publish(new Booked(id));
    }

    @Transactional
    public void sendMail(String to) {
      outbox.schedule("send-email", new Email(to));
    }
  }

  /** Listener and task beans; what they saw. */
  public static class Listeners {
    final JdbcTemplate jdbc;
    final List<String> typed = new CopyOnWriteArrayList<>();
    final List<Integer> batchSizes = new CopyOnWriteArrayList<>();
    final List<String> batched = new CopyOnWriteArrayList<>();
    final List<String> ledger = new CopyOnWriteArrayList<>();
    final List<String> mails = new CopyOnWriteArrayList<>();
    final List<Integer> mailAttempts = new CopyOnWriteArrayList<>();
    final List<String> effectAttempts = Collections.synchronizedList(new ArrayList<>());
    volatile CountDownLatch gate = new CountDownLatch(0);
    final CountDownLatch entered = new CountDownLatch(1);
    final AtomicBoolean finished = new AtomicBoolean();

    Listeners(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @BoxlineListener(subscription = "typed")
    public void onOrder(OrderPlaced order, Event event) throws InterruptedException {
      if (order.orderId().startsWith("slow")) {
        entered.countDown();
        gate.await(30, TimeUnit.SECONDS);
        finished.set(true);
      }
      assertThat(event.type()).isEqualTo("order.placed");
      typed.add(order.orderId());
    }

    @BoxlineListener(subscription = "batches", batchSize = 50)
    public void onBatch(List<OrderPlaced> orders) {
      batchSizes.add(orders.size());
      orders.forEach(o -> batched.add(o.orderId()));
    }

    @BoxlineListener(subscription = "effects", transactional = true, maxAttempts = 5)
    public void applyEffect(OrderPlaced order, Event event, Connection tx) {
      effectAttempts.add(order.orderId());
      assertThat(org.springframework.jdbc.datasource.DataSourceUtils.getConnection(db.dataSource()))
          .as("JdbcTemplate gets the listener's transaction")
          .isSameAs(tx);
      jdbc.update(
          "insert into " + db.table("effects") + " values (?, ?)",
          event.id().toString(),
          order.orderId());
      if (order.orderId().startsWith("flaky")
          && effectAttempts.stream().filter(order.orderId()::equals).count() < 3) {
        throw new IllegalStateException("flaky effect, attempt rolled back");
      }
    }

    @BoxlineListener(subscription = "ledger")
    public void onLedger(Event event) {
      ledger.add(event.payloadAs(Booked.class).orderId());
    }

    @BoxlineTask("send-email")
    public void send(Email mail, TaskContext context) {
      mailAttempts.add(context.attempt());
      mails.add(mail.to());
    }
  }

  private Orders orders() {
    return context.getBean(Orders.class);
  }

  private BoxlineOutbox outbox() {
    return context.getBean(BoxlineOutbox.class);
  }

  private Listeners listeners() {
    return context.getBean(Listeners.class);
  }

  private static void await(String what, java.util.function.BooleanSupplier done) {
    Await.until(Duration.ofSeconds(30), what, done);
  }

  @Test
  void anEventPublishedInATransactionalMethodReachesTypedBatchAndTransactionalListeners() {
    for (int i = 0; i < 20; i++) {
      orders().place("o-" + i, "customer-" + (i % 3));
    }
    Listeners l = listeners();
    await("20 typed events", () -> l.typed.size() == 20);
    await("20 batched events", () -> l.batched.size() == 20);
    await(
        "20 effects",
        () ->
            new JdbcTemplate(db.dataSource())
                    .queryForObject("select count(*) from " + db.table("effects"), Integer.class)
                == 20);
    assertThat(l.typed).containsExactlyInAnyOrderElementsOf(l.batched);
    assertThat(context.getBean(BoxlineListenerRegistrar.class).consumers())
        .extracting(io.boxline.Consumer::id)
        .as("the ConsumerCustomizer bean set the batches consumer's id")
        .contains("batches-consumer");
    assertThat(l.batchSizes).allSatisfy(n -> assertThat(n).isBetween(1, 50));
  }

  @Test
  void aRollbackPublishesNothingAndOutsideATransactionThePublishIsRefused() {
    assertThatThrownBy(() -> orders().placeThenFail("rolled-back"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("boom");
    assertThatThrownBy(
            () -> context.getBean(BoxlineOutbox.class).publish(new OrderPlaced("x", "c", 1)))
        .isInstanceOf(ConnectionStateException.class)
        .hasMessageContaining("no Spring transaction is active")
        .hasMessageContaining("@Transactional");
    assertThatThrownBy(() -> orders().placeReadOnly("read-only"))
        .isInstanceOf(ConnectionStateException.class)
        .hasMessageContaining("read-only");
    // A transaction of its own, when asked for:
    context
        .getBean(BoxlineOutbox.class)
        .inTransaction(
            () -> {
              outbox().publish(new OrderPlaced("own", "c", 1));
              return null;
            });
    orders().place("after", "c");
    Listeners l = listeners();
    await("the later events", () -> l.typed.containsAll(List.of("own", "after")));
    assertThat(l.typed).doesNotContain("rolled-back", "x", "read-only");
    assertThat(
            new JdbcTemplate(db.dataSource())
                .queryForObject(
                    "select count(*) from " + db.table("orders") + " where id = 'rolled-back'",
                    Integer.class))
        .isZero();
  }

  @Test
  void requiresNewKeepsItsOwnEventsWhateverTheOuterTransactionDoes() {
    TransactionTemplate outer =
        new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
    assertThatThrownBy(
            () ->
                outer.executeWithoutResult(
                    s -> {
                      outbox().publish(new OrderPlaced("outer-undone", "c", 1));
                      orders().placeInOwnTransaction("inner-kept");
                      throw new IllegalStateException("outer fails");
                    }))
        .hasMessage("outer fails");
    outer.executeWithoutResult(
        s -> {
          outbox().publish(new OrderPlaced("outer-kept", "c", 1));
          try {
            new TransactionTemplate(
                    context.getBean(PlatformTransactionManager.class),
                    new org.springframework.transaction.support.DefaultTransactionDefinition(
                        TransactionDefinition.PROPAGATION_REQUIRES_NEW))
                .executeWithoutResult(
                    inner -> {
                      outbox().publish(new OrderPlaced("inner-undone", "c", 1));
                      throw new IllegalStateException("inner fails");
                    });
          } catch (IllegalStateException expected) {
            // the outer transaction goes on
          }
        });
    Listeners l = listeners();
    await("the kept events", () -> l.typed.containsAll(List.of("inner-kept", "outer-kept")));
    orders().place("marker", "c");
    await("a later event", () -> l.typed.contains("marker"));
    assertThat(l.typed).doesNotContain("outer-undone", "inner-undone");
  }

  @Test
  void inTransactionTopicsAreHeldBackToTheCommitAndANestedRollbackForgetsItsEvents() {
    PlatformTransactionManager tm = context.getBean(PlatformTransactionManager.class);
    TransactionTemplate outer = new TransactionTemplate(tm);
    TransactionTemplate nested =
        new TransactionTemplate(
            tm,
            new org.springframework.transaction.support.DefaultTransactionDefinition(
                TransactionDefinition.PROPAGATION_NESTED));
    Boxline boxline = context.getBean(Boxline.class);
    outer.executeWithoutResult(
        s -> {
          orders().book("b-1");
          try {
            nested.executeWithoutResult(
                n -> {
                  orders().book("b-undone");
                  throw new IllegalStateException("nested fails");
                });
          } catch (IllegalStateException expected) {
            // rolled back to the savepoint
          }
          orders().book("b-2");
          long written =
              boxline.admin().lag("ledger").stream().mapToLong(PartitionLag::lastSequence).sum();
          assertThat(written).as("held back until the commit").isZero();
        });
    Listeners l = listeners();
    await("the ledger events", () -> l.ledger.size() == 2);
    assertThat(l.ledger).containsExactlyInAnyOrder("b-1", "b-2");
    assertThat(boxline.admin().lag("ledger").stream().mapToLong(PartitionLag::lastSequence).sum())
        .isEqualTo(2);
  }

  @Test
  void aTransactionalListenersEffectsCommitExactlyOnceWithTheCursor() {
    orders().place("flaky-1", "c");
    orders().place("plain-1", "c");
    JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
    await(
        "both effects",
        () ->
            jdbc.queryForObject("select count(*) from " + db.table("effects"), Integer.class) == 2);
    Listeners l = listeners();
    assertThat(l.effectAttempts.stream().filter("flaky-1"::equals).count())
        .as("two attempts rolled back, the third committed")
        .isEqualTo(3);
    assertThat(
            jdbc.queryForList(
                "select order_id from " + db.table("effects") + " order by order_id", String.class))
        .containsExactly("flaky-1", "plain-1");
    Boxline boxline = context.getBean(Boxline.class);
    await(
        "the cursor past both",
        () -> boxline.admin().lag("effects").stream().mapToLong(PartitionLag::backlog).sum() == 0);
  }

  @Test
  void aTaskScheduledInATransactionRunsOnItsTaskBean() {
    orders().sendMail("ada@example.com");
    Listeners l = listeners();
    await("the task", () -> l.mails.contains("ada@example.com"));
    assertThat(l.mailAttempts).containsExactly(1);
  }

  @Test
  void closingTheContextFinishesTheInFlightBatchBeforeBoxlineStops() throws Exception {
    Listeners l = listeners();
    l.gate = new CountDownLatch(1);
    orders().place("slow-1", "c");
    assertThat(l.entered.await(30, TimeUnit.SECONDS)).as("the listener started").isTrue();
    Thread closer = new Thread(context::close, "closer");
    closer.start();
    // The context waits for the listener; release it, and the close completes after it.
    closer.join(300);
    assertThat(closer.isAlive()).as("close waits for the in-flight batch").isTrue();
    l.gate.countDown();
    closer.join(30_000);
    assertThat(closer.isAlive()).isFalse();
    assertThat(l.finished).isTrue();
    assertThat(l.typed).contains("slow-1");
    context = null;
    // The cursor was committed past the event: a new Boxline sees no backlog.
    try (Boxline b =
        Boxline.builder()
            .store(io.boxline.jdbc.JdbcStore.builder(db.dataSource()).schema(db.schema()).build())
            .build()
            .start()) {
      assertThat(b.admin().lag("typed").stream().mapToLong(PartitionLag::backlog).sum()).isZero();
    }
  }

  /**
   * docs/architecture.md: a joined transaction's committed events go to consumers' workers, never
   * to the committing thread, which Spring still holds in the transaction's resources.
   */
  @Test
  void eventsOfASpringTransactionReachEvenCommittingThreadConsumersOnTheirWorkers() {
    List<Thread> handledOn = new CopyOnWriteArrayList<>();
    context
        .getBean(Boxline.class)
        .admin()
        .createSubscription(SubscriptionSpec.of("ledger-inline", LEDGER));
    try (io.boxline.Consumer inline =
        context
            .getBean(Boxline.class)
            .consumer("ledger-inline")
            .handleOnCommittingThread(true)
            .handler(e -> handledOn.add(Thread.currentThread()))
            .start()) {
      orders().book("inline-1");
      await("the ledger event handled", () -> handledOn.size() == 1);
      assertThat(handledOn.get(0)).isNotSameAs(Thread.currentThread());
      assertThat(inline.committingThreadBatches()).isZero();
    }
  }
}
