package io.boxline.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.spi.Store;
import io.boxline.testkit.suite.store.CatalogContract;
import io.boxline.testkit.suite.store.CursorContract;
import io.boxline.testkit.suite.store.InboxContract;
import io.boxline.testkit.suite.store.MonitoringContract;
import io.boxline.testkit.suite.store.ParkingContract;
import io.boxline.testkit.suite.store.PublishContract;
import io.boxline.testkit.suite.store.RetentionContract;
import io.boxline.testkit.suite.store.SequencerContract;
import io.boxline.testkit.suite.store.SettlementContract;
import io.boxline.testkit.suite.store.WakeupContract;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The store contract keeps its shape: one nested class per {@link Store} method, named after it, in
 * the contract class of the method's role, and none for a method the SPI does not have.
 */
class StoreContractCoverageTest {
  private static final List<Class<?>> ROLES =
      List.of(
          CatalogContract.class,
          PublishContract.class,
          SequencerContract.class,
          CursorContract.class,
          SettlementContract.class,
          ParkingContract.class,
          InboxContract.class,
          RetentionContract.class,
          MonitoringContract.class,
          WakeupContract.class);

  /**
   * The store's lifecycle, which every test of the contract goes through, and its coordination
   * store, which {@code CoordinationBehaviour} checks on every dialect.
   */
  private static final Set<String> CHECKED_ELSEWHERE =
      Set.of("migrate", "describe", "openTransaction", "coordination", "close");

  @Test
  void everyStoreMethodHasANestedClassOfItsNameInTheContract() {
    Set<String> nested =
        ROLES.stream()
            .flatMap(role -> Arrays.stream(role.getDeclaredClasses()))
            .filter(c -> c.isAnnotationPresent(Nested.class))
            .map(Class::getSimpleName)
            .collect(Collectors.toSet());
    Set<String> methods =
        Arrays.stream(Store.class.getMethods())
            .filter(m -> !Modifier.isStatic(m.getModifiers()))
            .map(Method::getName)
            .filter(name -> !CHECKED_ELSEWHERE.contains(name))
            .map(name -> Character.toUpperCase(name.charAt(0)) + name.substring(1))
            .collect(Collectors.toSet());
    assertThat(nested).containsExactlyInAnyOrderElementsOf(methods);
  }
}
