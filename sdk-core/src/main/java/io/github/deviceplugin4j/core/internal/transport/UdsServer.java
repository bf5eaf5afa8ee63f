package io.github.deviceplugin4j.core.internal.transport;

import io.github.deviceplugin4j.core.ConfigurationException;
import io.github.deviceplugin4j.core.internal.Loggers;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyServerBuilder;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioServerDomainSocketChannel;
import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;

/**
 * A gRPC server on a Unix socket file that never exists with looser permissions than asked: it is
 * bound inside a fresh private ({@code 0700}) directory next to its final place, given its
 * permissions there, then renamed into place atomically. Names start with a dot, so the kubelet's
 * plugin watcher ignores them.
 *
 * <p>The server is grpc-java's Netty server on the shared event loop, with the direct executor and
 * the limits of {@link TransportLimits}.
 */
public final class UdsServer {

  private static final Logger LOG = Loggers.named("UdsServer");

  /**
   * Extra bytes the private bind path needs beyond the directory: {@code /.dp4jXXXXXXXX/.s}. The
   * socket's own name starts with a dot too: the kubelet's plugin watcher descends into hidden
   * directories when it walks {@code plugins_registry} at start and skips only entries whose own
   * name starts with a dot ({@code pluginwatcher/plugin_watcher.go}, {@code traversePluginDir} and
   * {@code handleCreateEvent}), so a standby named {@code s} there would be registered as a second
   * plugin.
   */
  public static final int PRIVATE_PATH_EXTRA = "/.dp4j00000000/.s".length();

  private final Server server;
  private final Path path;
  private final SocketFiles.Identity identity;

  private UdsServer(Server server, Path path, SocketFiles.Identity identity) {
    this.server = server;
    this.path = path;
    this.identity = identity;
  }

  /**
   * Starts serving on a socket file. Every call runs on {@code group}, the shared event loop group,
   * so the services must never block: the request path hands vendor code that may block to worker
   * threads itself. {@code replacing} is the identity of this plugin's own current socket at the
   * path, which is replaced without a liveness probe; null when there is none. Throws a {@link
   * ConfigurationException} when another live process serves the path, or the path is taken by
   * something that is not a socket.
   */
  public static UdsServer start(
      Path path,
      Set<PosixFilePermission> permissions,
      List<ServerServiceDefinition> services,
      EventLoopGroup group,
      SocketFiles.Identity replacing)
      throws IOException {
    if (Files.exists(path, LinkOption.NOFOLLOW_LINKS)
        && !SocketFiles.sameFile(replacing, SocketFiles.identity(path))) {
      checkTakeable(path); // fail early; a stale socket is replaced when the new one is placed
    }
    return bind(path.getParent(), permissions, services, group).place(path, replacing);
  }

  /**
   * Binds a server in a fresh private directory under {@code dir}, with its permissions, ready to
   * be placed: serving a socket again then costs a rename instead of a server start (about 1-3 ms
   * on the path of a re-registration). The private directory is left alone by the kubelet, which
   * cleans up only files of the plugin directory. The server is reachable by nobody until placed.
   */
  public static Standby bind(
      Path dir,
      Set<PosixFilePermission> permissions,
      List<ServerServiceDefinition> services,
      EventLoopGroup group)
      throws IOException {
    Path privateDir = createPrivateDir(dir);
    Path bindPath = privateDir.resolve(".s");
    Server server = null;
    try {
      server = grpcServer(bindPath, services, group);
      Files.setPosixFilePermissions(bindPath, permissions);
      return new Standby(server, privateDir, bindPath);
    } catch (IOException | RuntimeException e) {
      if (server != null) {
        server.shutdownNow();
      }
      Files.deleteIfExists(bindPath);
      Files.deleteIfExists(privateDir);
      throw e;
    }
  }

  /**
   * Calls run on the event loop (the direct executor, see {@link #start}'s {@code group}): handing
   * each one to an executor thread and back costs more than the whole call (about 150 us at p50).
   */
  private static Server grpcServer(
      Path bindPath, List<ServerServiceDefinition> services, EventLoopGroup group)
      throws IOException {
    TransportLogs.install();
    DirectMemoryCheck.once();
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(UnixDomainSocketAddress.of(bindPath))
            .channelType(NioServerDomainSocketChannel.class)
            .bossEventLoopGroup(group)
            .workerEventLoopGroup(group)
            .directExecutor()
            .protocolNegotiator(
                new ConnectionGate(
                    TransportLimits.MAX_CONNECTIONS_PER_SOCKET,
                    bindPath.getParent().getParent().toString()))
            .maxConcurrentCallsPerConnection(TransportLimits.MAX_CONCURRENT_CALLS_PER_CONNECTION)
            .maxInboundMessageSize(TransportLimits.MAX_INBOUND_MESSAGE_BYTES)
            .maxInboundMetadataSize(TransportLimits.MAX_INBOUND_METADATA_BYTES)
            .handshakeTimeout(TransportLimits.HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
            .maxConnectionIdle(
                TransportLimits.MAX_CONNECTION_IDLE.toMillis(), TimeUnit.MILLISECONDS)
            .permitKeepAliveTime(
                TransportLimits.PERMIT_KEEPALIVE_TIME.toMillis(), TimeUnit.MILLISECONDS)
            .permitKeepAliveWithoutCalls(true)
            .maxRstFramesPerWindow(
                TransportLimits.MAX_RST_FRAMES_PER_WINDOW,
                (int) TransportLimits.RST_WINDOW.toSeconds())
            .withOption(ChannelOption.SO_BACKLOG, TransportLimits.ACCEPT_BACKLOG)
            // grpc-netty sets SO_KEEPALIVE on every accepted channel; Unix sockets do not know
            // it, and Netty would log a warning per connection. null removes the option.
            .withChildOption(ChannelOption.SO_KEEPALIVE, null);
    services.forEach(builder::addService);
    return builder.build().start();
  }

  /** A server bound in its private directory, not yet placed at its final path. */
  public static final class Standby {
    private final Server server;
    private final Path privateDir;
    private final Path bindPath;

    private Standby(Server server, Path privateDir, Path bindPath) {
      this.server = server;
      this.privateDir = privateDir;
      this.bindPath = bindPath;
    }

    /** Where the server listens until it is placed (in its private directory). */
    public Path path() {
      return bindPath;
    }

    /** Whether the standby can still be placed: its server runs and its socket file is there. */
    public boolean usable() {
      return !server.isShutdown() && SocketFiles.isSocket(bindPath);
    }

    /**
     * Puts the socket at its final path (see {@link UdsServer#start}, also for {@code replacing}
     * and the {@link ConfigurationException} when another live process serves the path); the
     * standby is used up, whether this succeeds or not.
     */
    public UdsServer place(Path path, SocketFiles.Identity replacing) throws IOException {
      try {
        UdsServer.place(bindPath, path, replacing);
        return new UdsServer(server, path, SocketFiles.identity(path));
      } catch (IOException | RuntimeException e) {
        server.shutdownNow();
        throw e;
      } finally {
        Files.deleteIfExists(bindPath);
        Files.deleteIfExists(privateDir);
      }
    }

    /** Stops the server and removes its private directory. */
    public void discard() {
      server.shutdownNow();
      try {
        Files.deleteIfExists(bindPath);
        Files.deleteIfExists(privateDir);
      } catch (IOException e) {
        LOG.debug("Could not remove {}: {}", privateDir, e.toString());
      }
    }
  }

  /**
   * Puts the bound socket at its final path. Our own previous socket is replaced atomically
   * (rename). Anything else is never replaced behind its back: the socket is hard-linked into
   * place, which fails when the path exists, so of two instances starting at once exactly one wins;
   * the other finds a live socket there and fails with a clear error. A stale socket (its server is
   * gone) is removed and the link tried once more.
   */
  private static void place(Path bound, Path path, SocketFiles.Identity replacing)
      throws IOException {
    if (SocketFiles.sameFile(replacing, SocketFiles.identity(path))) {
      Files.move(bound, path, StandardCopyOption.ATOMIC_MOVE);
      return;
    }
    boolean removedStale = false;
    for (int attempt = 0; attempt < 10; attempt++) {
      try {
        Files.createLink(path, bound);
        return;
      } catch (UnsupportedOperationException noHardLinks) {
        Files.move(bound, path, StandardCopyOption.ATOMIC_MOVE);
        return;
      } catch (FileAlreadyExistsException taken) {
        SocketFiles.Identity stale = SocketFiles.identity(path);
        if (stale == null) {
          continue; // removed meanwhile
        }
        checkTakeable(path);
        if (removedStale) {
          throw liveInstance(path); // taken again right after the stale one was removed
        }
        if (SocketFiles.sameFile(stale, SocketFiles.identity(path))) {
          LOG.info("Replacing stale socket {} left by an instance that is gone", path);
          Files.deleteIfExists(path);
          removedStale = true;
        }
      }
    }
    throw liveInstance(path);
  }

  /** Fails unless the file at the path is a socket nobody serves any more. */
  private static void checkTakeable(Path path) {
    if (!SocketFiles.isSocket(path)) {
      throw new ConfigurationException(
          path + " exists and is not a socket; remove it or choose another plugin directory");
    }
    if (SocketFiles.isLive(path)) {
      throw liveInstance(path);
    }
  }

  private static ConfigurationException liveInstance(Path path) {
    return new ConfigurationException(
        "another live process is serving "
            + path
            + " (a second instance of this plugin?); stop it first: two plugins for one"
            + " resource would keep replacing each other at the kubelet");
  }

  private static Path createPrivateDir(Path dir) throws IOException {
    for (int attempt = 0; ; attempt++) {
      String name = ".dp4j" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
      Path candidate = dir.resolve(name);
      try {
        return Files.createDirectory(
            candidate,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      } catch (FileAlreadyExistsException e) {
        if (attempt > 10) {
          throw e;
        }
      }
    }
  }

  /** Whether the socket file at the path is still the one this server created. */
  public boolean stillOurs() {
    return SocketFiles.sameFile(identity, SocketFiles.identity(path));
  }

  /**
   * Stops accepting new connections (the listening socket is closed; its file is gone or replaced
   * already) but keeps every open connection and its calls, however long they last. The kubelet
   * never closes a superseded connection on its own, and when any ListAndWatch stream of a resource
   * ends it takes the whole resource offline: so a superseded connection must stay open until the
   * kubelet drops it (it restarts) or the plugin stops ({@link #close(long)}). The server
   * terminates by itself once its last connection is gone.
   */
  public void retire() {
    server.shutdown();
  }

  /** Removes the socket file if it is still this server's (the server keeps running). */
  public void removeFileIfOurs() {
    if (stillOurs()) {
      removeFile();
    }
  }

  private void removeFile() {
    try {
      Files.deleteIfExists(path);
    } catch (IOException e) {
      LOG.warn("Could not remove socket {}: {}", path, e.toString());
    }
  }

  /** Whether the server has stopped and every connection is gone. */
  public boolean isTerminated() {
    return server.isTerminated();
  }

  /** Cuts every connection and call now, without waiting; see {@link #close(long)}. */
  public void shutdownNow() {
    server.shutdownNow();
  }

  /**
   * Stops the server now, waits up to {@code awaitMillis} for it to terminate, and removes its
   * socket file if it is still ours.
   */
  public void close(long awaitMillis) {
    boolean ours = stillOurs();
    server.shutdownNow();
    try {
      server.awaitTermination(awaitMillis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (ours) {
      removeFile();
    }
  }

  /** The identity of the socket file this server created. */
  public SocketFiles.Identity identity() {
    return identity;
  }
}
