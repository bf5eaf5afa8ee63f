package io.github.deviceplugin4j.core;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks public API that may still change in an incompatible way in a minor release: a type, a
 * method, a constructor, a field, or a whole package (in its {@code package-info.java}).
 *
 * <p>What deviceplugin4j promises, from 0.1.0 on:
 *
 * <ul>
 *   <li>Public API without this annotation follows semantic versioning: it changes incompatibly
 *       only in a new major version (while the version is 0.x, only in a new minor version, and the
 *       CHANGELOG says how to migrate).
 *   <li>API with this annotation, or inside a type or package that has it, works and is tested like
 *       the rest, but its shape may change in any release, even a patch release, when use on real
 *       nodes shows a better one. Every such change is listed in the CHANGELOG. The annotation is
 *       removed once the API is considered stable; that is a compatible change.
 *   <li>Types in packages named {@code ...internal} are not API at all, annotated or not: they
 *       change without notice and must not be used by plugins. No public or protected signature of
 *       a non-internal type exposes an internal type; a test of the build checks it.
 * </ul>
 *
 * <pre>{@code
 * @Experimental("the DRA API follows resource.k8s.io, which is still evolving")
 * public final class DraPluginHost { ... }
 * }</pre>
 *
 * <p>The annotation is kept in class files and at run time, so tools (an API checker such as
 * japicmp, an IDE inspection, a test of your own) can find what you use of it.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({
  ElementType.TYPE,
  ElementType.METHOD,
  ElementType.CONSTRUCTOR,
  ElementType.FIELD,
  ElementType.PACKAGE
})
public @interface Experimental {

  /**
   * Why the API may change, or what would settle it; optional.
   *
   * @return a short reason, or an empty string
   */
  String value() default "";
}
