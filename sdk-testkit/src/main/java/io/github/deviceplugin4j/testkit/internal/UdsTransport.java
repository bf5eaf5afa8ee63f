package io.github.deviceplugin4j.testkit.internal;

import io.grpc.BindableService;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDomainSocketChannel;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * gRPC over Unix domain sockets with Netty 4.2's pure-Java NIO transport: one event loop group and
 * one executor per owner, and the client channels made with them, all shut down by {@link #close()}
 * in an order where no gRPC callback meets a stopped executor.
 */
public final class UdsTransport implements AutoCloseable {
  /** The kubelet's (gRPC's default) maximum inbound message size: 4 MiB. */
  public static final int MAX_INBOUND_MESSAGE_SIZE = 4 * 1024 * 1024;

  /** Longest Unix socket path in bytes (108 including the terminating NUL). */
  public static final int MAX_SOCKET_PATH_BYTES = 107;

  private final EventLoopGroup group;
  private final ExecutorService executor;
  private final ScheduledExecutorService scheduler;
  private final List<Thread> threads = new ArrayList<>();
  // Guards channels, closing and dialers; idle is signalled when a dial returns.
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition idle = lock.newCondition();
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<Thread> dialers = new ArrayList<>();
  private boolean closing;

  /**
   * Creates the event loop group and executors; threads are named after {@code name}.
   *
   * @param name a thread name prefix
   */
  public UdsTransport(String name) {
    group =
        new MultiThreadIoEventLoopGroup(
            2, new DefaultThreadFactory(name + "-io", true), NioIoHandler.newFactory());
    executor = Executors.newCachedThreadPool(threadFactory(name + "-grpc"));
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(1, threadFactory(name + "-timer"));
    // Cancelled timers (e.g. a grace period ended by a new registration) leave the queue at once
    // instead of staying there for their whole delay.
    timer.setRemoveOnCancelPolicy(true);
    scheduler = timer;
  }

  private ThreadFactory threadFactory(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      synchronized (threads) {
        threads.add(t);
      }
      return t;
    };
  }

  /**
   * The executor for blocking work (gRPC callbacks run here too).
   *
   * @return the executor
   */
  public ExecutorService executor() {
    return executor;
  }

  /**
   * The scheduler for timers.
   *
   * @return the scheduler
   */
  public ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /**
   * Checks that a socket path fits the 108-byte limit.
   *
   * @param socket the path
   * @throws IllegalArgumentException naming the path and the fix when it is too long
   */
  public static void checkSocketPath(Path socket) {
    int len = socket.toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8).length;
    if (len > MAX_SOCKET_PATH_BYTES) {
      throw new IllegalArgumentException(
          "socket path is "
              + len
              + " bytes, over the Unix limit of "
              + MAX_SOCKET_PATH_BYTES
              + ": "
              + socket
              + " (use a shorter directory, e.g. under /tmp)");
    }
  }

  /**
   * Binds a gRPC server on a Unix socket (the file must not exist) and starts it.
   *
   * @param socket the socket path
   * @param services the services
   * @return the started server
   * @throws UncheckedIOException when binding fails
   */
  public Server startServer(Path socket, BindableService... services) {
    checkSocketPath(socket);
    NettyServerBuilder b =
        NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(socket))
            .channelType(NioServerDomainSocketChannel.class)
            .bossEventLoopGroup(group)
            .workerEventLoopGroup(group)
            // See channel(): removes the SO_KEEPALIVE grpc-netty sets, which a Unix socket lacks.
            .withChildOption(ChannelOption.SO_KEEPALIVE, null)
            .executor(executor);
    for (BindableService s : services) {
      b.addService(s);
    }
    try {
      return b.build().start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot serve on " + socket + ": " + e.getMessage(), e);
    }
  }

  /**
   * A client channel to a Unix socket, receiving at most {@link #MAX_INBOUND_MESSAGE_SIZE} bytes
   * per message like the kubelet. The channel connects lazily; see {@link #awaitReady}. This
   * transport keeps it until it terminates and shuts it down on {@link #close()}; once close has
   * begun, the channel comes back already shut down.
   *
   * @param socket the socket path
   * @return the channel
   */
  public ManagedChannel channel(Path socket) {
    ManagedChannel ch = build(socket);
    lock.lock();
    try {
      channels.removeIf(ManagedChannel::isTerminated);
      channels.add(ch);
      if (closing) {
        ch.shutdownNow();
      }
    } finally {
      lock.unlock();
    }
    return ch;
  }

  /**
   * The channels made by {@link #channel} that had not terminated when last looked at (terminated
   * ones are dropped as new ones are made, so a long-lived owner stays flat).
   *
   * @return a snapshot
   */
  public List<ManagedChannel> channels() {
    lock.lock();
    try {
      return List.copyOf(channels);
    } finally {
      lock.unlock();
    }
  }

  private ManagedChannel build(Path socket) {
    return NettyChannelBuilder.forAddress(UnixDomainSocketAddress.of(socket))
        .channelType(NioDomainSocketChannel.class)
        .eventLoopGroup(group)
        .executor(executor)
        .usePlaintext()
        .overrideAuthority("localhost")
        .maxInboundMessageSize(MAX_INBOUND_MESSAGE_SIZE)
        // grpc-netty sets SO_KEEPALIVE on every client channel, and applies user options after
        // it: a null value removes the option, so Netty does not warn that a Unix socket lacks it.
        .withOption(ChannelOption.SO_KEEPALIVE, null)
        .build();
  }

  /**
   * Waits until the channel is connected, like grpc-go's blocking dial: connection failures are
   * retried with gRPC's backoff until the timeout.
   *
   * @param channel the channel
   * @param timeout how long to wait
   * @return true when connected, false on timeout or shutdown
   * @throws InterruptedException when interrupted
   */
  public boolean awaitReady(ManagedChannel channel, Duration timeout) throws InterruptedException {
    return dial(channel, timeout, () -> {});
  }

  /**
   * Like {@link #awaitReady}, and runs {@code onFirstFailure} once if a connection attempt failed
   * before the channel was ready (nothing served the socket yet), without a probing connection.
   * {@link #close()} waits for dials in progress to return (each returns once close has shut its
   * channel down, or at its own timeout) before it stops the executor their state callbacks run on.
   *
   * @param channel the channel
   * @param timeout how long to wait
   * @param onFirstFailure called at most once
   * @return true when connected, false on timeout or shutdown
   * @throws InterruptedException when interrupted
   */
  public boolean dial(ManagedChannel channel, Duration timeout, Runnable onFirstFailure)
      throws InterruptedException {
    lock.lock();
    try {
      dialers.add(Thread.currentThread());
    } finally {
      lock.unlock();
    }
    try {
      return dialUntil(channel, timeout, onFirstFailure);
    } finally {
      lock.lock();
      try {
        dialers.remove(Thread.currentThread());
        idle.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  private static boolean dialUntil(
      ManagedChannel channel, Duration timeout, Runnable onFirstFailure)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    boolean failedOnce = false;
    ConnectivityState state = channel.getState(true);
    while (state != ConnectivityState.READY) {
      if (state == ConnectivityState.SHUTDOWN) {
        return false;
      }
      if (state == ConnectivityState.TRANSIENT_FAILURE && !failedOnce) {
        failedOnce = true;
        onFirstFailure.run();
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      CountDownLatch changed = new CountDownLatch(1);
      channel.notifyWhenStateChanged(state, changed::countDown);
      if (!changed.await(left, TimeUnit.NANOSECONDS)) {
        return false;
      }
      state = channel.getState(true);
    }
    return true;
  }

  /**
   * Threads this transport created that are still alive.
   *
   * @return thread names
   */
  public List<String> liveThreads() {
    List<String> live = new ArrayList<>();
    synchronized (threads) {
      for (Thread t : threads) {
        if (t.isAlive()) {
          live.add(t.getName());
        }
      }
    }
    return live;
  }

  /**
   * Whether the event loop group has terminated.
   *
   * @return true once terminated
   */
  public boolean isTerminated() {
    return group.isTerminated() && executor.isTerminated() && scheduler.isTerminated();
  }

  /**
   * Stops the timers; shuts down every channel made here and waits for them and for dials in
   * progress (a dial ends when its channel shuts down, and its last state callback still needs the
   * executor); then stops the executor (interrupting calls still running), waits for it, and only
   * then the event loop: a call that ends during close still writes its answer on a running loop.
   */
  @Override
  public void close() {
    List<ManagedChannel> open;
    lock.lock();
    try {
      closing = true;
      open = List.copyOf(channels);
    } finally {
      lock.unlock();
    }
    scheduler.shutdownNow();
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      for (ManagedChannel ch : open) {
        ch.shutdownNow();
      }
      for (ManagedChannel ch : open) {
        ch.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      }
      awaitNoDials();
      executor.shutdownNow();
      executor.awaitTermination(5, TimeUnit.SECONDS);
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
      group.terminationFuture().await(5, TimeUnit.SECONDS);
      scheduler.awaitTermination(5, TimeUnit.SECONDS);
      // A terminated pool's threads may still be exiting; wait for them so none outlives close().
      deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      List<Thread> copy;
      synchronized (threads) {
        copy = new ArrayList<>(threads);
      }
      for (Thread t : copy) {
        long left = deadline - System.nanoTime();
        if (left > 0 && t != Thread.currentThread()) {
          t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Waits for dials on other threads (a dial's own callback may be what called close()). */
  private void awaitNoDials() throws InterruptedException {
    lock.lock();
    try {
      while (dialers.stream().anyMatch(t -> t != Thread.currentThread())) {
        idle.await();
      }
    } finally {
      lock.unlock();
    }
  }
}
