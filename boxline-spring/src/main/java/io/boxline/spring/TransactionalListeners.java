package io.boxline.spring;

import io.boxline.Boxline;
import io.boxline.JoinedTransaction;
import java.sql.Connection;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionSynchronizationUtils;

/**
 * Runs a transactional listener inside the transaction in which Boxline moves the subscription's
 * cursor, made the current Spring transaction of {@code dataSource} for the call: {@code
 * JdbcTemplate}, jOOQ and {@code @Transactional} code (which takes part) write into it, so their
 * effects and the cursor commit together, exactly once. {@link BoxlineOutbox} publishes into it
 * too. Boxline commits it after the call; synchronizations registered meanwhile see {@code
 * beforeCommit} at the end of the call and {@code afterCompletion} with an unknown status.
 */
final class TransactionalListeners {
  private record Bound(
      DataSource dataSource, Connection tx, Holder holder, JoinedTransaction[] joined) {}

  private static final ThreadLocal<Bound> CURRENT = new ThreadLocal<>();

  /** Marks Boxline's transaction as active, so Spring's transaction managers take part in it. */
  private static final class Holder extends ConnectionHolder {
    Holder(Connection tx) {
      super(tx);
      setTransactionActive(true);
      setSynchronizedWithTransaction(true);
    }
  }

  private TransactionalListeners() {}

  /** The listener transaction this thread runs on {@code dataSource} now, or null. */
  static Connection current(DataSource dataSource) {
    Bound b = CURRENT.get();
    if (b == null || b.dataSource != dataSource) {
      return null;
    }
    // A REQUIRES_NEW inside the listener binds a holder of its own: publish into that one.
    return TransactionSynchronizationManager.getResource(dataSource) == b.holder ? b.tx : null;
  }

  /** The listener transaction {@code tx}, joined by {@code boxline} on first use. */
  static JoinedTransaction joined(Boxline boxline, Connection tx) {
    Bound b = CURRENT.get();
    if (b.joined[0] == null) {
      b.joined[0] = boxline.join(tx);
    }
    return b.joined[0];
  }

  static void run(DataSource dataSource, Connection tx, Runnable listener) {
    if (TransactionSynchronizationManager.isSynchronizationActive()
        || TransactionSynchronizationManager.hasResource(dataSource)) {
      throw new IllegalStateException(
          "a Spring transaction is active on the consumer's thread; Boxline's listener threads"
              + " must not run other transactions around a listener");
    }
    Holder holder = new Holder(tx);
    Bound bound = new Bound(dataSource, tx, holder, new JoinedTransaction[1]);
    TransactionSynchronizationManager.bindResource(dataSource, holder);
    TransactionSynchronizationManager.initSynchronization();
    TransactionSynchronizationManager.setActualTransactionActive(true);
    CURRENT.set(bound);
    boolean done = false;
    try {
      listener.run();
      TransactionSynchronizationUtils.triggerBeforeCommit(false);
      if (bound.joined[0] != null) {
        bound.joined[0].beforeCommit();
      }
      done = true;
    } finally {
      List<TransactionSynchronization> synchronizations;
      try {
        TransactionSynchronizationUtils.triggerBeforeCompletion();
      } finally {
        synchronizations = TransactionSynchronizationManager.getSynchronizations();
        TransactionSynchronizationManager.clearSynchronization();
        TransactionSynchronizationManager.setActualTransactionActive(false);
        TransactionSynchronizationManager.unbindResourceIfPossible(dataSource);
        CURRENT.remove();
        if (bound.joined[0] != null) {
          bound.joined[0].completed();
        }
      }
      TransactionSynchronizationUtils.invokeAfterCompletion(
          synchronizations,
          done
              ? TransactionSynchronization.STATUS_UNKNOWN
              : TransactionSynchronization.STATUS_ROLLED_BACK);
    }
  }
}
