package io.github.deviceplugin4j.core;

import java.util.List;

/**
 * The backend returned or published data the kubelet must not see: a relative or {@code ..} path,
 * permissions other than {@code r}, {@code w}, {@code m}, an invalid environment variable or CDI
 * name, an empty, too long or repeated device ID, a device list over the kubelet's 4 MiB message
 * limit, a preferred allocation of the wrong size. A kubelet call fails with {@code INTERNAL}
 * naming the problems; a bad device in a published snapshot is dropped and the others keep working.
 */
public class InvalidBackendDataException extends BackendException {

  private static final long serialVersionUID = 1L;

  /** Each problem found, naming the offending value. */
  private final List<String> problems;

  /**
   * Invalid backend data.
   *
   * @param operation where the data came from, e.g. {@code "Allocate"} or {@code "devices"}
   * @param problems each problem, naming the offending value
   */
  public InvalidBackendDataException(String operation, List<String> problems) {
    super(operation, message(operation, problems), null);
    this.problems = List.copyOf(problems);
  }

  /**
   * Each problem found, naming the offending value.
   *
   * @return the problems, at least one
   */
  public List<String> problems() {
    return problems;
  }

  private static String message(String operation, List<String> problems) {
    return "backend returned invalid data in " + operation + ": " + String.join("; ", problems);
  }
}
