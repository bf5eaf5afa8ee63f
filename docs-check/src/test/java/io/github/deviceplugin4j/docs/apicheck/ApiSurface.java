package io.github.deviceplugin4j.docs.apicheck;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The public API of the deviceplugin4j classes on a class path, and where it exposes a type from an
 * {@code .internal} package. A type is API when it is public (or a public or protected member type
 * of an API type) and outside {@code .internal}; its signature is its superclass, its interfaces,
 * its type parameters' bounds, and the types in its public and protected fields, constructors and
 * methods (parameters, return type, declared exceptions, type parameters' bounds), generic
 * arguments included.
 */
final class ApiSurface {

  /** Every SDK class lives under this package. */
  static final String ROOT = "io.github.deviceplugin4j.";

  /**
   * Packages that are not published API: generated gRPC code (sdk-proto), and the code of the
   * unpublished modules (this one, the examples, reliability, benchmarks).
   */
  static final List<String> EXEMPT =
      List.of(
          ROOT + "api.",
          ROOT + "docs.",
          ROOT + "examples.",
          ROOT + "reliability.",
          ROOT + "benchmarks.");

  private ApiSurface() {}

  /**
   * The names of the SDK classes, outside the exempt packages, on a class path.
   *
   * @param classPath entries as in {@code java.class.path}: directories and jars
   * @return binary class names, sorted
   */
  static Set<String> classNames(String classPath) {
    Set<String> names = new TreeSet<>();
    for (String entry : classPath.split(java.io.File.pathSeparator)) {
      Path path = Path.of(entry);
      if (Files.isDirectory(path)) {
        try (Stream<Path> files = Files.walk(path)) {
          files
              .filter(file -> file.toString().endsWith(".class"))
              .forEach(file -> add(names, path.relativize(file).toString()));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      } else if (entry.endsWith(".jar") && Files.isRegularFile(path)) {
        try (JarFile jar = new JarFile(path.toFile())) {
          Enumeration<JarEntry> entries = jar.entries();
          while (entries.hasMoreElements()) {
            String name = entries.nextElement().getName();
            if (name.endsWith(".class") && !name.startsWith("META-INF/")) {
              add(names, name);
            }
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    return names;
  }

  private static void add(Set<String> names, String file) {
    String name =
        file.substring(0, file.length() - ".class".length()).replace('/', '.').replace('\\', '.');
    if (name.startsWith(ROOT)
        && !name.endsWith("package-info")
        && !name.endsWith("module-info")
        && EXEMPT.stream().noneMatch(name::startsWith)) {
      names.add(name);
    }
  }

  /** Whether a type belongs to an internal package: one of its package's names is "internal". */
  static boolean isInternal(Class<?> type) {
    return ("." + type.getPackageName() + ".").contains(".internal.");
  }

  /** Whether a class is part of the API: visible from outside and not internal. */
  static boolean isApi(Class<?> type) {
    if (isInternal(type) || type.isAnonymousClass() || type.isLocalClass() || type.isSynthetic()) {
      return false;
    }
    int modifiers = type.getModifiers();
    if (type.getEnclosingClass() == null) {
      return Modifier.isPublic(modifiers);
    }
    return (Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers))
        && isApi(type.getEnclosingClass());
  }

  /**
   * Where an API type's signature exposes an internal type.
   *
   * @param type a class; nothing is reported when it is not API
   * @return one line per exposure: the type, the member and the internal type it exposes
   */
  static List<String> exposures(Class<?> type) {
    List<String> found = new ArrayList<>();
    if (!isApi(type)) {
      return found;
    }
    String owner = type.getName();
    check(found, owner, "superclass", type.getGenericSuperclass());
    for (Type face : type.getGenericInterfaces()) {
      check(found, owner, "implemented interface", face);
    }
    for (TypeVariable<?> variable : type.getTypeParameters()) {
      checkBounds(found, owner, "type parameter " + variable.getName(), variable);
    }
    for (Field field : type.getDeclaredFields()) {
      if (visible(field.getModifiers()) && !field.isSynthetic()) {
        check(found, owner, "field " + field.getName(), field.getGenericType());
      }
    }
    for (Constructor<?> constructor : type.getDeclaredConstructors()) {
      if (visible(constructor.getModifiers()) && !constructor.isSynthetic()) {
        checkExecutable(found, owner, "constructor" + parameters(constructor), constructor);
      }
    }
    for (Method method : type.getDeclaredMethods()) {
      if (visible(method.getModifiers()) && !method.isSynthetic() && !method.isBridge()) {
        String member = "method " + method.getName() + parameters(method);
        check(found, owner, member + " return type", method.getGenericReturnType());
        checkExecutable(found, owner, member, method);
      }
    }
    return found;
  }

  private static boolean visible(int modifiers) {
    return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
  }

  private static String parameters(Executable executable) {
    StringBuilder text = new StringBuilder("(");
    for (Class<?> parameter : executable.getParameterTypes()) {
      text.append(text.length() > 1 ? ", " : "").append(parameter.getSimpleName());
    }
    return text.append(")").toString();
  }

  private static void checkExecutable(
      List<String> found, String owner, String member, Executable executable) {
    for (TypeVariable<?> variable : executable.getTypeParameters()) {
      checkBounds(found, owner, member + " type parameter " + variable.getName(), variable);
    }
    Type[] parameters = executable.getGenericParameterTypes();
    for (int i = 0; i < parameters.length; i++) {
      check(found, owner, member + " parameter " + i, parameters[i]);
    }
    for (Type thrown : executable.getGenericExceptionTypes()) {
      check(found, owner, member + " throws clause", thrown);
    }
  }

  private static void checkBounds(
      List<String> found, String owner, String where, TypeVariable<?> variable) {
    for (Type bound : variable.getBounds()) {
      check(found, owner, where + " bound", bound);
    }
  }

  private static void check(List<String> found, String owner, String where, Type type) {
    Set<String> internal = new TreeSet<>();
    collectInternal(type, internal);
    for (String name : internal) {
      found.add(owner + ": " + where + " exposes " + name);
    }
  }

  private static void collectInternal(Type type, Set<String> internal) {
    if (type instanceof Class<?> c) {
      while (c.isArray()) {
        c = c.getComponentType();
      }
      if (isInternal(c)) {
        internal.add(c.getName());
      }
    } else if (type instanceof ParameterizedType parameterized) {
      collectInternal(parameterized.getRawType(), internal);
      if (parameterized.getOwnerType() != null) {
        collectInternal(parameterized.getOwnerType(), internal);
      }
      for (Type argument : parameterized.getActualTypeArguments()) {
        collectInternal(argument, internal);
      }
    } else if (type instanceof GenericArrayType array) {
      collectInternal(array.getGenericComponentType(), internal);
    } else if (type instanceof WildcardType wildcard) {
      for (Type bound : wildcard.getUpperBounds()) {
        collectInternal(bound, internal);
      }
      for (Type bound : wildcard.getLowerBounds()) {
        collectInternal(bound, internal);
      }
    }
    // A type variable's bounds are checked where it is declared.
  }
}
