package io.boxline.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The modules' boundaries, checked on their compiled main classes (each module's {@code
 * target/classes}, every module of the parent pom):
 *
 * <ul>
 *   <li>no module uses another module's {@code internal} packages ({@code io.boxline.internal},
 *       {@code io.boxline.jdbc.internal}...): they are implementation, free to change; what other
 *       modules need is public API or SPI;
 *   <li>boxline-core uses the JDK and itself only (its pom's enforcer rule keeps its dependencies
 *       test-scoped; this checks the bytecode).
 * </ul>
 *
 * {@link RulesCatchViolationsTest} proves that both rules fail on a violation.
 */
class ModuleBoundariesTest {
  static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  static final String SELF = "boxline-architecture";

  /** Module name → its main classes, in the parent pom's order. */
  static final Map<String, JavaClasses> MODULES = new LinkedHashMap<>();

  @BeforeAll
  static void importModules() throws IOException {
    List<String> missing = new ArrayList<>();
    for (String module : modules(ROOT.resolve("pom.xml"))) {
      if (module.equals(SELF)) {
        continue;
      }
      Path classes = ROOT.resolve(module).resolve("target/classes");
      if (!Files.isDirectory(ROOT.resolve(module).resolve("src/main/java"))) {
        continue; // no main code
      }
      if (!Files.isDirectory(classes)) {
        missing.add(module);
        continue;
      }
      MODULES.put(module, new ClassFileImporter().importPath(classes));
    }
    assertThat(missing)
        .as(
            "modules without target/classes: build them first"
                + " (./mvnw -pl boxline-architecture -am test)")
        .isEmpty();
  }

  /** The {@code <module>} entries of a pom. */
  static List<String> modules(Path pom) throws IOException {
    Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(Files.readString(pom));
    List<String> out = new ArrayList<>();
    while (m.find()) {
      out.add(m.group(1).trim());
    }
    return out;
  }

  @Test
  void everyModuleIsADependencyOfThisOneSoThatItIsBuiltFirst() throws IOException {
    String pom = Files.readString(ROOT.resolve(SELF).resolve("pom.xml"));
    List<String> absent =
        modules(ROOT.resolve("pom.xml")).stream()
            .filter(m -> !m.equals(SELF))
            .filter(m -> !pom.contains("<artifactId>" + m + "</artifactId>"))
            .toList();
    assertThat(absent).as("modules missing from boxline-architecture's dependencies").isEmpty();
  }

  @Test
  void noModuleReachesIntoAnotherModulesInternalPackages() {
    assertThat(MODULES).containsKeys("boxline-core", "boxline-jdbc", "boxline-server");
    List<String> violations = new ArrayList<>(); // every module's, not only the first's
    for (Map.Entry<String, JavaClasses> e : MODULES.entrySet()) {
      try {
        internalsOfOtherModules(e.getKey(), e.getValue()).check(e.getValue());
      } catch (AssertionError failed) {
        violations.add(failed.getMessage());
      }
    }
    assertThat(violations).as("modules that use another module's internal packages").isEmpty();
  }

  @Test
  void coreUsesTheJdkOnly() {
    JavaClasses core = MODULES.get("boxline-core");
    assertThat(core.contain("io.boxline.Boxline")).isTrue();
    jdkAndItselfOnly("boxline-core", core).check(core);
  }

  /**
   * {@code module}'s classes use no class of an {@code io.boxline} package with an {@code internal}
   * segment unless that class is one of its own.
   */
  static ArchRule internalsOfOtherModules(String module, JavaClasses own) {
    Set<String> names = names(own);
    return noClasses()
        .should()
        .dependOnClassesThat(
            DescribedPredicate.describe(
                "are in another module's internal package",
                (JavaClass c) -> isBoxlineInternal(c) && !names.contains(base(c).getName())))
        .as(module + " uses no other module's internal package")
        .because("internal packages are implementation: use the public API or an SPI");
  }

  /** {@code module}'s classes use JDK classes and their own only. */
  static ArchRule jdkAndItselfOnly(String module, JavaClasses own) {
    Set<String> names = names(own);
    return noClasses()
        .should()
        .dependOnClassesThat(
            DescribedPredicate.describe(
                "are neither the JDK's nor " + module + "'s own",
                (JavaClass c) -> !names.contains(base(c).getName()) && !isJdk(base(c))))
        .as(module + " depends on the JDK only")
        .because("applications bring their own libraries; JSON lives in boxline-jackson(3)");
  }

  static Set<String> names(JavaClasses classes) {
    return classes.stream().map(JavaClass::getName).collect(Collectors.toSet());
  }

  static JavaClass base(JavaClass c) {
    return c.isArray() ? c.getBaseComponentType() : c;
  }

  static boolean isBoxlineInternal(JavaClass c) {
    String pkg = base(c).getPackageName();
    return pkg.startsWith("io.boxline.") && List.of(pkg.split("\\.")).contains("internal");
  }

  /** Primitives and what the platform class loader (the JDK's modules) can load. */
  static boolean isJdk(JavaClass c) {
    if (c.isPrimitive()) {
      return true;
    }
    try {
      Class.forName(c.getName(), false, ClassLoader.getPlatformClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
