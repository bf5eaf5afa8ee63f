package io.github.deviceplugin4j.core;

import java.util.Objects;
import java.util.Optional;

/**
 * Optional capabilities of a resource given on the builder instead of implemented by its backend:
 * with {@link DevicePluginHost.Builder#backend(DeviceBackend, Capabilities)}, a backend that wraps
 * another one (for logging, caching or fault injection) keeps the wrapped one's {@link Allocator},
 * {@link PreferredAllocator} and {@link PreStartHook} without implementing them itself.
 *
 * <pre>{@code
 * FpgaBackend fpga = new FpgaBackend(Path.of("/"));
 * DevicePluginHost.builder()
 *     .backend(
 *         new LoggingBackend(fpga),
 *         Capabilities.builder().allocator(fpga).preStartHook(fpga).build())
 *     .start();
 * }</pre>
 *
 * <p>Each capability given here wins over the same capability implemented by the backend; those not
 * given here are still detected on the backend. The options the kubelet is told ({@code
 * GetDevicePluginOptions}) follow from the result. {@link NonBlocking} is read from the object
 * given here (its class or its method), so a lambda always runs on a worker thread with its
 * deadline.
 */
public final class Capabilities {

  private static final Capabilities NONE = new Capabilities(null, null, null, Sharing.none());

  private final Allocator allocator;
  private final PreferredAllocator preferredAllocator;
  private final PreStartHook preStartHook;
  private final Sharing sharing;

  private Capabilities(
      Allocator allocator,
      PreferredAllocator preferredAllocator,
      PreStartHook preStartHook,
      Sharing sharing) {
    this.allocator = allocator;
    this.preferredAllocator = preferredAllocator;
    this.preStartHook = preStartHook;
    this.sharing = sharing;
  }

  /**
   * No capability given: everything is detected on the backend.
   *
   * @return the empty set
   */
  public static Capabilities none() {
    return NONE;
  }

  /**
   * A builder with no capability set.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The allocator given, if any.
   *
   * @return the allocator
   */
  public Optional<Allocator> allocator() {
    return Optional.ofNullable(allocator);
  }

  /**
   * The preferred-allocation policy given, if any.
   *
   * @return the policy
   */
  public Optional<PreferredAllocator> preferredAllocator() {
    return Optional.ofNullable(preferredAllocator);
  }

  /**
   * The pre-start hook given, if any.
   *
   * @return the hook
   */
  public Optional<PreStartHook> preStartHook() {
    return Optional.ofNullable(preStartHook);
  }

  /**
   * How the resource's devices are shared.
   *
   * @return the sharing; {@link Sharing#none()} unless set
   */
  @Experimental
  public Sharing sharing() {
    return sharing;
  }

  @Override
  public String toString() {
    return "Capabilities[allocator="
        + (allocator != null)
        + ", preferredAllocator="
        + (preferredAllocator != null)
        + ", preStartHook="
        + (preStartHook != null)
        + (sharing.equals(Sharing.none()) ? "" : ", sharing=" + sharing)
        + "]";
  }

  /** Builds {@link Capabilities}; not thread-safe. */
  public static final class Builder {
    private Allocator allocator;
    private PreferredAllocator preferredAllocator;
    private PreStartHook preStartHook;
    private Sharing sharing = Sharing.none();

    private Builder() {}

    /**
     * Advertises every device several times (see {@link Sharing}).
     *
     * @param value the sharing
     * @return this builder
     */
    @Experimental
    public Builder sharing(Sharing value) {
      this.sharing = Objects.requireNonNull(value, "sharing");
      return this;
    }

    /**
     * Answers Allocate with this allocator (see {@link Allocator}).
     *
     * @param value the allocator
     * @return this builder
     */
    public Builder allocator(Allocator value) {
      this.allocator = Objects.requireNonNull(value, "allocator");
      return this;
    }

    /**
     * Answers GetPreferredAllocation with this policy (see {@link PreferredAllocator}); the kubelet
     * is told it may ask.
     *
     * @param value the policy
     * @return this builder
     */
    public Builder preferredAllocator(PreferredAllocator value) {
      this.preferredAllocator = Objects.requireNonNull(value, "preferredAllocator");
      return this;
    }

    /**
     * Runs this hook on PreStartContainer (see {@link PreStartHook}); the kubelet is told to call
     * it.
     *
     * @param value the hook
     * @return this builder
     */
    public Builder preStartHook(PreStartHook value) {
      this.preStartHook = Objects.requireNonNull(value, "preStartHook");
      return this;
    }

    /**
     * Builds the capabilities.
     *
     * @return an immutable value
     */
    public Capabilities build() {
      return new Capabilities(allocator, preferredAllocator, preStartHook, sharing);
    }
  }
}
