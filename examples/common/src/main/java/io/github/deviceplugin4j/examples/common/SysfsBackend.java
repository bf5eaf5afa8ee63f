package io.github.deviceplugin4j.examples.common;

import io.github.deviceplugin4j.core.DeviceBackend;
import io.github.deviceplugin4j.core.DeviceSink;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;

/**
 * What the example backends share around their own {@link #devices()}: a fixed resource name and
 * poll interval, the {@link DeviceSink} kept from start to stop so that {@link #rescan()} can ask
 * the core to read sysfs again at once, and a {@link ProblemLog} of what the last scan found wrong.
 *
 * <p>A subclass scans its hardware in {@link #devices()}, passes the scan's problems to {@link
 * #reportProblems(List)} and returns the devices; it adds capabilities ({@code Allocator}, {@code
 * PreStartHook}, ...) by implementing them.
 *
 * <pre>{@code
 * final class WidgetBackend extends SysfsBackend {
 *   WidgetBackend(Path root) {
 *     super(LoggerFactory.getLogger(WidgetBackend.class), "example.com/widget", Duration.ofSeconds(5));
 *     this.scanner = new WidgetScanner(root);
 *   }
 *
 *   public List<Device> devices() {
 *     WidgetScanner.Scan scan = scanner.scan();
 *     reportProblems(scan.problems());
 *     return scan.widgets().stream().map(WidgetBackend::toDevice).toList();
 *   }
 * }
 * }</pre>
 */
public abstract class SysfsBackend implements DeviceBackend {
  private final String resourceName;
  private final Duration pollInterval;
  private final ProblemLog problems;
  private volatile DeviceSink sink;

  /**
   * The shared part of a backend.
   *
   * @param log the subclass's logger; problems are logged there, prefixed with the resource name
   * @param resourceName the resource name
   * @param pollInterval how often the core calls {@link #devices()}
   */
  protected SysfsBackend(Logger log, String resourceName, Duration pollInterval) {
    this.resourceName = Objects.requireNonNull(resourceName, "resourceName");
    this.pollInterval = Objects.requireNonNull(pollInterval, "pollInterval");
    this.problems = new ProblemLog(Objects.requireNonNull(log, "log"), resourceName);
  }

  @Override
  public final String resourceName() {
    return resourceName;
  }

  @Override
  public final Duration pollInterval() {
    return pollInterval;
  }

  /** Keeps the sink for {@link #rescan()}. */
  @Override
  public void start(DeviceSink deviceSink) {
    this.sink = deviceSink;
  }

  /** Drops the sink: {@link #rescan()} does nothing from now on. */
  @Override
  public void stop() {
    this.sink = null;
  }

  /**
   * Asks the core to read sysfs again now, e.g. after a udev or netlink event, or in a test. Does
   * nothing while the backend is not started.
   */
  public final void rescan() {
    DeviceSink s = sink;
    if (s != null) {
      s.rescan();
    }
  }

  /**
   * The problems the last scan found in sysfs (each is logged once when it appears).
   *
   * @return one sentence per problem
   */
  public final List<String> problems() {
    return problems.current();
  }

  /**
   * Records the problems of a scan; call it from {@link #devices()}.
   *
   * @param found every problem the scan found, one sentence each
   */
  protected final void reportProblems(List<String> found) {
    problems.report(found);
  }
}
