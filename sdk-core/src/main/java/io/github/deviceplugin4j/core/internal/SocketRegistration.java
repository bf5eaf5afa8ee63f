package io.github.deviceplugin4j.core.internal;

import java.io.IOException;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A registration strategy that serves the resource on one {@link SocketOwner}. */
abstract class SocketRegistration implements RegistrationStrategy {

  static final Logger LOG = LoggerFactory.getLogger(ResourcePlugin.class);

  final RegistrationContext ctx;
  final String name;
  volatile SocketOwner owner;

  SocketRegistration(RegistrationContext ctx, SocketOwner owner) {
    this.ctx = ctx;
    this.name = ctx.name;
    this.owner = owner;
  }

  @Override
  public Path socket() {
    return owner.socket();
  }

  @Override
  public boolean serving() {
    return owner.stillOurs();
  }

  /**
   * Serves the socket again if its file is gone. The superseded server keeps the kubelet's
   * connections: ending one of their streams would take the resource offline at the kubelet.
   */
  void ensureServing() throws IOException {
    if (owner.ensureServing()) {
      LOG.info("Serving {} again on {}", name, owner.socket());
    }
  }

  /**
   * Safety check: when the socket file is not ours any more, the registration is lost and the
   * socket is served and registered again.
   *
   * @return true when the socket was gone
   */
  boolean socketGoneOnCheck() {
    if (owner.stillOurs()) {
      return false;
    }
    if (ctx.registered()) {
      LOG.warn("{}: socket {} vanished without a file event; serving it again", name, socket());
    }
    lost("its socket " + owner.socket() + " is gone");
    register("safety check: socket gone");
    return true;
  }
}
