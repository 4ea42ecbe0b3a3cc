package io.boxline.spring;

import io.boxline.Boxline;
import io.boxline.ConnectionStateException;
import io.boxline.JoinedTransaction;
import io.boxline.OutgoingEvent;
import io.boxline.PublishOptions;
import io.boxline.PublishResult;
import io.boxline.TaskOptions;
import java.sql.Connection;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Publishes events and schedules tasks in the Spring transaction the caller is in — a
 * {@code @Transactional} method, a {@code TransactionTemplate}, JDBC, JPA/Hibernate or jOOQ on the
 * same {@link DataSource} — with no {@code Connection} argument.
 *
 * <p>The first call in a transaction joins it ({@link Boxline#join}) on the transaction's own
 * connection; no second connection is taken. Boxline then follows the transaction through a {@link
 * TransactionSynchronization}: events of in-transaction topics are held back and written just
 * before the commit, a rollback to a savepoint ({@code PROPAGATION_NESTED}) forgets what it undid,
 * a rollback publishes nothing, and after the commit the sequencer and local consumers are told at
 * once. A suspended transaction ({@code REQUIRES_NEW}) keeps its own events.
 *
 * <p>Outside a transaction every call fails with a {@link ConnectionStateException} that says how
 * to fix it (the event would otherwise commit apart from the business rows it belongs to); {@link
 * #inTransaction} runs a transaction when the caller wants one of its own. A read-only transaction
 * is refused too.
 */
public final class BoxlineOutbox {
  private final Boxline boxline;
  private final DataSource dataSource;
  private final TransactionTemplate transactions;
  private final TransactionTemplate newTransactions;

  /**
   * @param boxline a Boxline on {@code dataSource}, started before the first publish (in a Spring
   *     context, a {@link BoxlineLifecycle} starts it once the context is refreshed)
   * @param dataSource the data source the application's transactions run on
   * @param transactionManager the application's transaction manager, for {@link #inTransaction};
   *     may be null when that is not used
   */
  public BoxlineOutbox(
      Boxline boxline, DataSource dataSource, PlatformTransactionManager transactionManager) {
    this.boxline = Objects.requireNonNull(boxline, "boxline");
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.transactions =
        transactionManager == null ? null : new TransactionTemplate(transactionManager);
    this.newTransactions =
        transactionManager == null
            ? null
            : new TransactionTemplate(
                transactionManager,
                new org.springframework.transaction.support.DefaultTransactionDefinition(
                    org.springframework.transaction.TransactionDefinition
                        .PROPAGATION_REQUIRES_NEW));
  }

  /** Publishes a typed event (its topic, type and key from its registered {@code EventType}). */
  public PublishResult publish(Object event) {
    return publish(event, PublishOptions.options());
  }

  public PublishResult publish(Object event, PublishOptions options) {
    Connection tx = joined().connection();
    return boxline.publisher().publish(tx, event, options);
  }

  /** Publishes an event built with {@link OutgoingEvent#builder}. */
  public PublishResult publish(OutgoingEvent event) {
    Connection tx = joined().connection();
    return boxline.publisher().publish(tx, event);
  }

  /** Publishes typed events and {@link OutgoingEvent}s in list order. */
  public List<PublishResult> publishAll(List<?> events) {
    Connection tx = joined().connection();
    return boxline.publisher().publishAll(tx, events);
  }

  /** Schedules a task in the caller's transaction. */
  public PublishResult schedule(String taskType, Object payload) {
    return schedule(taskType, payload, TaskOptions.NONE);
  }

  public PublishResult schedule(String taskType, Object payload, TaskOptions options) {
    Connection tx = joined().connection();
    return boxline.tasks().schedule(tx, taskType, payload, options);
  }

  /**
   * Runs {@code work} in the caller's transaction, or in a new one when there is none
   * (PROPAGATION_REQUIRED), for a caller that publishes outside a {@code @Transactional} method on
   * purpose.
   */
  public <T> T inTransaction(Supplier<T> work) {
    if (transactions == null) {
      throw new IllegalStateException(
          "this BoxlineOutbox has no transaction manager; construct it with the application's"
              + " PlatformTransactionManager to use inTransaction");
    }
    return transactions.execute(status -> work.get());
  }

  /**
   * Runs {@code work} in a new transaction of its own (PROPAGATION_REQUIRES_NEW), as code that runs
   * after another transaction's commit must (a {@code @TransactionalEventListener}, say).
   */
  public <T> T inNewTransaction(Supplier<T> work) {
    if (newTransactions == null) {
      throw new IllegalStateException(
          "this BoxlineOutbox has no transaction manager; construct it with the application's"
              + " PlatformTransactionManager to use inNewTransaction");
    }
    return newTransactions.execute(status -> work.get());
  }

  /** The Boxline this outbox publishes to. */
  public Boxline boxline() {
    return boxline;
  }

  /** The current transaction, joined on its first use. */
  private JoinedTransaction joined() {
    Object bound = TransactionSynchronizationManager.getResource(this);
    if (bound != null) {
      return ((JoinedSynchronization) bound).joined;
    }
    if (!TransactionSynchronizationManager.isActualTransactionActive()
        || !TransactionSynchronizationManager.isSynchronizationActive()) {
      throw new ConnectionStateException(
          "no Spring transaction is active, so the event would commit apart from the business"
              + " rows it belongs to; publish inside a @Transactional method (or a"
              + " TransactionTemplate), or call boxlineOutbox.inTransaction(() -> ...) to run a"
              + " transaction of its own");
    }
    if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
      throw new ConnectionStateException(
          "the current Spring transaction is read-only, and publishing writes to the outbox; publish"
              + " in a read-write transaction (@Transactional without readOnly = true)");
    }
    Connection connection = DataSourceUtils.getConnection(dataSource);
    JoinedSynchronization sync = new JoinedSynchronization(this, boxline.join(connection));
    TransactionSynchronizationManager.registerSynchronization(sync);
    TransactionSynchronizationManager.bindResource(this, sync);
    return sync.joined;
  }

  /** Follows one Spring transaction for Boxline; bound to it under the outbox as key. */
  private static final class JoinedSynchronization implements TransactionSynchronization {
    private final Object key;
    private final JoinedTransaction joined;

    JoinedSynchronization(Object key, JoinedTransaction joined) {
      this.key = key;
      this.joined = joined;
    }

    @Override
    public void suspend() {
      TransactionSynchronizationManager.unbindResourceIfPossible(key);
    }

    @Override
    public void resume() {
      TransactionSynchronizationManager.bindResource(key, this);
    }

    @Override
    public void savepoint(Object savepoint) {
      joined.savepoint(savepoint);
    }

    @Override
    public void savepointRollback(Object savepoint) {
      joined.rolledBackTo(savepoint);
    }

    @Override
    public void beforeCommit(boolean readOnly) {
      joined.beforeCommit();
    }

    @Override
    public void afterCommit() {
      joined.afterCommit();
    }

    @Override
    public void afterCompletion(int status) {
      TransactionSynchronizationManager.unbindResourceIfPossible(key);
      joined.completed();
    }
  }
}
