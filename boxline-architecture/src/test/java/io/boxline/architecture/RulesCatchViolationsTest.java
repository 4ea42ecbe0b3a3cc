package io.boxline.architecture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.boxline.architecture.fixture.a.Open;
import io.boxline.architecture.fixture.a.internal.Secret;
import io.boxline.architecture.fixture.b.Intruder;
import io.boxline.architecture.fixture.b.Polite;
import org.junit.jupiter.api.Test;

/**
 * The rules of {@link ModuleBoundariesTest} fail on a violation: two fixture "modules", {@code a}
 * (with an internal package) and {@code b}, one of whose classes uses {@code a}'s internal class
 * and a library class.
 */
class RulesCatchViolationsTest {
  static final JavaClasses A = new ClassFileImporter().importClasses(Open.class, Secret.class);
  static final JavaClasses B = new ClassFileImporter().importClasses(Intruder.class, Polite.class);
  static final JavaClasses POLITE = new ClassFileImporter().importClasses(Polite.class);

  @Test
  void usingAnotherModulesInternalClassFails() {
    assertThatThrownBy(() -> ModuleBoundariesTest.internalsOfOtherModules("b", B).check(B))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("b uses no other module's internal package")
        .hasMessageContaining(Intruder.class.getName())
        .hasMessageContaining(Secret.class.getName());
  }

  @Test
  void usingOnesOwnInternalClassAndAnotherModulesApiPasses() {
    ModuleBoundariesTest.internalsOfOtherModules("a", A).check(A);
    ModuleBoundariesTest.internalsOfOtherModules("b", POLITE).check(POLITE);
  }

  @Test
  void aClassThatUsesALibraryIsNotJdkOnly() {
    assertThatThrownBy(() -> ModuleBoundariesTest.jdkAndItselfOnly("b", B).check(B))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("b depends on the JDK only")
        .hasMessageContaining("org.assertj.core.api.Assertions");
    // Open uses java.sql, java.util and its own module only.
    ModuleBoundariesTest.jdkAndItselfOnly("a", A).check(A);
    assertThat(ModuleBoundariesTest.isJdk(new ClassFileImporter().importClass(String.class)))
        .isTrue();
  }
}
