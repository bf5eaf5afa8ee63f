package io.github.deviceplugin4j.testkit.junit5;

import io.github.deviceplugin4j.testkit.FakeKubelet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * A JUnit 5 extension that gives each test a fresh {@link FakeKubelet} in a short temporary
 * directory ({@code <tmp>/fk…/dp}, with {@code reg/} and {@code pr/kubelet.sock} next to it when
 * enabled), closes it after the test and deletes the directory.
 *
 * <pre>{@code
 * @RegisterExtension
 * FakeKubeletExtension kubelet = FakeKubeletExtension.create().withPodResources();
 *
 * @Test
 * void allocates() {
 *   FakeKubelet k = kubelet.get();
 *   ...
 * }
 * }</pre>
 *
 * <p>Leak check: after a passing test (and after its {@code @AfterEach} methods), the extension
 * waits up to two seconds for every plugin's {@code ListAndWatch} stream to end, then fails the
 * test if a plugin is still connected, if a plugin socket is left in the plugin or registry
 * directory, or if the fake itself failed to release a thread or socket. Turn it off with {@link
 * #withoutLeakCheck()}.
 *
 * <p>Uses only JUnit Jupiter API available since 5.10, so it runs on JUnit 5.10+ and JUnit 6.
 */
public final class FakeKubeletExtension
    implements BeforeEachCallback, AfterEachCallback, ParameterResolver {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(FakeKubeletExtension.class);
  private static final Duration DISCONNECT_WAIT = Duration.ofSeconds(2);

  private boolean registry;
  private boolean podResources;
  private boolean leakCheck = true;
  private Duration gracePeriod;
  private Consumer<FakeKubelet.Builder> customizer = b -> {};
  private volatile FakeKubelet current;
  private final boolean declarative;

  /** Used by JUnit for {@link FakeKubeletTest}; in code use {@link #create()}. */
  public FakeKubeletExtension() {
    this.declarative = true;
  }

  private FakeKubeletExtension(boolean declarative) {
    this.declarative = declarative;
  }

  /**
   * An extension with defaults: legacy registration only, the kubelet's grace period, leak check
   * on.
   *
   * @return the extension
   */
  public static FakeKubeletExtension create() {
    return new FakeKubeletExtension(false);
  }

  /**
   * Also watch a plugins registry directory (plugin-watcher mode).
   *
   * @return this extension
   */
  public FakeKubeletExtension withRegistry() {
    this.registry = true;
    return this;
  }

  /**
   * Also serve PodResources.
   *
   * @return this extension
   */
  public FakeKubeletExtension withPodResources() {
    this.podResources = true;
    return this;
  }

  /**
   * Sets the grace period before a disconnected resource is removed.
   *
   * @param gracePeriod the grace period
   * @return this extension
   */
  public FakeKubeletExtension withGracePeriod(Duration gracePeriod) {
    this.gracePeriod = Objects.requireNonNull(gracePeriod, "gracePeriod");
    return this;
  }

  /**
   * Applies further settings to each kubelet's builder (the directories are already set).
   *
   * @param customizer called with the builder before each start
   * @return this extension
   */
  public FakeKubeletExtension configure(Consumer<FakeKubelet.Builder> customizer) {
    this.customizer = Objects.requireNonNull(customizer, "customizer");
    return this;
  }

  /**
   * Turns the leak check off.
   *
   * @return this extension
   */
  public FakeKubeletExtension withoutLeakCheck() {
    this.leakCheck = false;
    return this;
  }

  /**
   * The current test's fake kubelet.
   *
   * @return the kubelet
   * @throws IllegalStateException outside a test
   */
  public FakeKubelet get() {
    FakeKubelet k = current;
    if (k == null) {
      throw new IllegalStateException(
          "no fake kubelet: get() works inside a test, @BeforeEach or @AfterEach method of a class"
              + " that registers this extension");
    }
    return k;
  }

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    Settings s = settings(context);
    Path root = Files.createTempDirectory(shortTempBase(), "fk");
    FakeKubelet.Builder b = FakeKubelet.builder().pluginDir(root.resolve("dp"));
    if (s.registry) {
      b.registryDir(root.resolve("reg"));
    }
    if (s.podResources) {
      b.podResourcesSocket(root.resolve("pr").resolve("kubelet.sock"));
    }
    if (s.gracePeriod != null) {
      b.gracePeriod(s.gracePeriod);
    }
    customizer.accept(b);
    FakeKubelet kubelet;
    try {
      kubelet = b.start();
    } catch (RuntimeException e) {
      deleteTree(root);
      throw e;
    }
    current = kubelet;
    context.getStore(NAMESPACE).put(Key.KUBELET, kubelet);
    context.getStore(NAMESPACE).put(Key.ROOT, root);
    context.getStore(NAMESPACE).put(Key.SETTINGS, s);
  }

  @Override
  public void afterEach(ExtensionContext context) {
    ExtensionContext.Store store = context.getStore(NAMESPACE);
    FakeKubelet kubelet = store.remove(Key.KUBELET, FakeKubelet.class);
    Path root = store.remove(Key.ROOT, Path.class);
    Settings s = store.remove(Key.SETTINGS, Settings.class);
    if (kubelet == null) {
      return;
    }
    current = null;
    boolean passed = context.getExecutionException().isEmpty();
    List<String> leaks = new ArrayList<>();
    String log = "";
    try {
      if (passed && s.leakCheck) {
        for (String r : kubelet.awaitAllDisconnected(DISCONNECT_WAIT)) {
          leaks.add(
              "plugin for "
                  + r
                  + " is still connected (its ListAndWatch stream is open): close the plugin in"
                  + " the test or an @AfterEach method");
        }
        List<Path> dirs = new ArrayList<>();
        dirs.add(kubelet.pluginDir());
        kubelet.registryDir().ifPresent(dirs::add);
        for (Path d : dirs) {
          for (Path sock : socketsIn(d)) {
            if (!sock.equals(kubelet.kubeletSocket())) {
              leaks.add("socket left behind: " + sock + " (a plugin must remove its socket)");
            }
          }
        }
        log = kubelet.eventLog();
      }
    } finally {
      kubelet.close();
      if (passed && s.leakCheck) {
        for (String p : kubelet.verifyClosed()) {
          leaks.add("the fake kubelet leaked: " + p);
        }
      }
      if (root != null) {
        deleteTree(root);
      }
    }
    if (!leaks.isEmpty()) {
      throw new AssertionError(
          "leak check failed after "
              + context.getDisplayName()
              + ":\n  - "
              + String.join("\n  - ", leaks)
              + "\n"
              + log);
    }
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == FakeKubelet.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    FakeKubelet k = context.getStore(NAMESPACE).get(Key.KUBELET, FakeKubelet.class);
    if (k == null) {
      throw new org.junit.jupiter.api.extension.ParameterResolutionException(
          "a FakeKubelet parameter is only available in test methods and @BeforeEach/@AfterEach"
              + " methods (one kubelet per test)");
    }
    return k;
  }

  private enum Key {
    KUBELET,
    ROOT,
    SETTINGS
  }

  private record Settings(
      boolean registry, boolean podResources, Duration gracePeriod, boolean leakCheck) {}

  private Settings settings(ExtensionContext context) {
    if (declarative) {
      Optional<FakeKubeletTest> a =
          context
              .getTestClass()
              .flatMap(c -> AnnotationSupport.findAnnotation(c, FakeKubeletTest.class));
      if (a.isPresent()) {
        FakeKubeletTest t = a.get();
        return new Settings(
            t.registry(),
            t.podResources(),
            t.gracePeriodMillis() < 0 ? null : Duration.ofMillis(t.gracePeriodMillis()),
            t.leakCheck());
      }
    }
    return new Settings(registry, podResources, gracePeriod, leakCheck);
  }

  /** java.io.tmpdir when it is short, else /tmp: socket paths must stay under 108 bytes. */
  private static Path shortTempBase() {
    Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
    if (tmp.toAbsolutePath().toString().length() <= 40) {
      return tmp;
    }
    return Path.of("/tmp");
  }

  private static List<Path> socketsIn(Path dir) {
    return io.github.deviceplugin4j.testkit.internal.SocketFiles.socketsIn(dir);
  }

  private static void deleteTree(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try {
      Files.walkFileTree(
          root,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              Files.deleteIfExists(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException exc)
                throws IOException {
              Files.deleteIfExists(dir);
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete the test directory " + root, e);
    }
  }
}
