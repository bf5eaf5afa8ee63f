package io.github.deviceplugin4j.core.internal;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import io.github.deviceplugin4j.core.internal.engine.HostEngine;
import org.junit.jupiter.api.Test;

/**
 * The directions sdk-core's packages may depend on each other in, as docs/architecture.md draws
 * them. A new arrow that points the wrong way, or a circle between internal packages, fails the
 * build; move the piece that is in the wrong place, or give the lower package a small interface the
 * upper one implements (as {@code state.DeviceListEncoder} does for the API adapters).
 */
@AnalyzeClasses(
    packages = "io.github.deviceplugin4j.core",
    importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

  private static final String CORE = "io.github.deviceplugin4j.core";
  private static final String INTERNAL = CORE + ".internal";

  /**
   * Each internal package and what it may use. The public API is a layer too, used by all of them
   * (its records and exceptions); what it may use of the engine is below.
   */
  @ArchTest
  static final ArchRule internalPackagesPointOneWay =
      layeredArchitecture()
          .consideringOnlyDependenciesInLayers()
          .layer("api")
          .definedBy(CORE, CORE + ".podresources")
          .layer("engine")
          .definedBy(INTERNAL + ".engine..")
          .layer("registration")
          .definedBy(INTERNAL + ".registration..")
          .layer("config")
          .definedBy(INTERNAL + ".config..")
          .layer("requests")
          .definedBy(INTERNAL + ".requests..")
          .layer("state")
          .definedBy(INTERNAL + ".state..")
          .layer("transport")
          .definedBy(INTERNAL + ".transport..")
          .layer("util")
          .definedBy(INTERNAL)
          .whereLayer("engine")
          .mayOnlyAccessLayers(
              "registration", "config", "requests", "state", "transport", "util", "api")
          .whereLayer("registration")
          .mayOnlyAccessLayers("config", "requests", "state", "transport", "util", "api")
          .whereLayer("config")
          .mayOnlyAccessLayers("requests", "state", "transport", "util", "api")
          .whereLayer("requests")
          .mayOnlyAccessLayers("state", "transport", "util", "api")
          .whereLayer("state")
          .mayOnlyAccessLayers("util", "api")
          .whereLayer("transport")
          .mayOnlyAccessLayers("util", "api")
          .whereLayer("util")
          .mayOnlyAccessLayers("api")
          .because("the engine uses the others and none of them uses the engine");

  /**
   * The public API starts the engine and builds its configuration; it never reaches past them into
   * registration or the transport.
   */
  @ArchTest
  static final ArchRule publicApiGoesThroughTheEngine =
      noClasses()
          .that()
          .resideInAnyPackage(CORE, CORE + ".podresources")
          .should()
          .dependOnClassesThat()
          .resideInAnyPackage(INTERNAL + ".registration..", INTERNAL + ".transport..");

  /**
   * Every internal class is in one of the packages above, so that a new package cannot slip past
   * the layer rule (which sees only the packages it names): a new one gets its place there and in
   * docs/architecture.md.
   */
  @ArchTest
  static final ArchRule everyInternalClassHasALayer =
      classes()
          .that()
          .resideInAPackage(INTERNAL + "..")
          .should()
          .resideInAnyPackage(
              INTERNAL,
              INTERNAL + ".engine..",
              INTERNAL + ".registration..",
              INTERNAL + ".config..",
              INTERNAL + ".requests..",
              INTERNAL + ".state..",
              INTERNAL + ".transport..");

  /** No circle between two internal packages, however long. */
  @ArchTest
  static final ArchRule noCircleBetweenInternalPackages =
      slices().matching(INTERNAL + ".(*)..").should().beFreeOfCycles();

  /**
   * A class of this package that uses the engine: what {@link #internalPackagesPointOneWay}
   * forbids.
   */
  static final class UtilityThatUsesTheEngine {
    HostEngine engine;
  }

  @Test
  void theLayerRuleCatchesAnArrowThatPointsUp() {
    JavaClasses classes =
        new ClassFileImporter().importClasses(UtilityThatUsesTheEngine.class, HostEngine.class);

    EvaluationResult result = internalPackagesPointOneWay.evaluate(classes);

    assertThat(result.hasViolation()).isTrue();
    assertThat(result.getFailureReport().getDetails())
        .anyMatch(d -> d.contains(UtilityThatUsesTheEngine.class.getName()));
  }
}
