package io.boxline.spring;

import io.boxline.StoreException;
import io.boxline.TransactionRunner;
import io.boxline.TransactionWork;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.DefaultTransactionDefinition;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Runs Boxline's transactional listeners in transactions of the application's own transaction
 * manager ({@code PROPAGATION_REQUIRES_NEW}): the connection Boxline locks the cursor on and moves
 * it with is the one Spring binds to the data source, so JPA/Hibernate ({@code
 * JpaTransactionManager}), {@code JdbcTemplate} and jOOQ writes of the listener commit with the
 * cursor, exactly once, and {@link BoxlineOutbox} joins the same transaction.
 */
public final class SpringTransactionRunner implements TransactionRunner {
  private final TransactionTemplate template;
  private final DataSource dataSource;

  public SpringTransactionRunner(
      PlatformTransactionManager transactionManager, DataSource dataSource) {
    DefaultTransactionDefinition d =
        new DefaultTransactionDefinition(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
    d.setName("boxline-listener");
    this.template = new TransactionTemplate(Objects.requireNonNull(transactionManager), d);
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  @Override
  public <T> T inNewTransaction(TransactionWork<T> work) {
    return template.execute(
        status -> {
          if (!TransactionSynchronizationManager.hasResource(dataSource)) {
            throw new IllegalStateException(
                "the transaction manager does not run its transactions on Boxline's DataSource,"
                    + " so a listener's writes and the cursor could not commit together; give"
                    + " Boxline the DataSource the transaction manager manages");
          }
          try {
            return work.run(DataSourceUtils.getConnection(dataSource));
          } catch (SQLException e) {
            throw new StoreException("transactional listener failed: " + e.getMessage(), e);
          }
        });
  }
}
