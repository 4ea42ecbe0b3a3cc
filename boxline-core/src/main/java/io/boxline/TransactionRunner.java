package io.boxline;

/**
 * Runs a transaction the way the application's framework runs its own (Spring's transaction
 * manager, say), for {@link ConsumerBuilder#transactionalHandler(TransactionalHandler,
 * TransactionRunner)}: the handler's writes through the framework (JPA, jOOQ, its JDBC template)
 * and the cursor's move then share one transaction.
 */
public interface TransactionRunner {
  /**
   * Runs {@code work} in a new transaction on a connection to Boxline's database, the one the
   * framework's own data access uses in it: commits when {@code work} returns, rolls back and
   * rethrows (unchecked as it came, checked wrapped) when it throws.
   */
  <T> T inNewTransaction(TransactionWork<T> work);
}
