package io.github.deviceplugin4j.dra;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A driver that records its calls: claims whose UID starts with "fail" fail, "throw" throw,
 * anything else gets one device named after the claim. Optionally blocks in prepare until released.
 */
class RecordingDriver implements DraDriver {

  final List<String> prepared = new CopyOnWriteArrayList<>();
  final List<String> unprepared = new CopyOnWriteArrayList<>();
  final Map<String, List<PreparedDevice>> unpreparedDevices = new ConcurrentHashMap<>();
  final AtomicInteger inFlight = new AtomicInteger();
  final AtomicInteger maxInFlight = new AtomicInteger();
  volatile CountDownLatch gate;
  volatile boolean failUnprepare;

  @Override
  public PrepareResult prepare(Claim claim) throws Exception {
    int now = inFlight.incrementAndGet();
    maxInFlight.accumulateAndGet(now, Math::max);
    try {
      prepared.add(claim.uid());
      CountDownLatch g = gate;
      if (g != null && !g.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("test gate never opened");
      }
      if (claim.uid().startsWith("fail")) {
        return PrepareResult.failed("no device free for " + claim.name());
      }
      if (claim.uid().startsWith("throw")) {
        throw new IllegalStateException("vendor library crashed");
      }
      return PrepareResult.prepared(
          new PreparedDevice(
              List.of("gpu/small"),
              "node-1",
              "dev-" + claim.uid(),
              List.of("example.com/gpu=" + claim.uid())));
    } finally {
      inFlight.decrementAndGet();
    }
  }

  @Override
  public void unprepare(Claim claim, List<PreparedDevice> devices) throws Exception {
    unprepared.add(claim.uid());
    if (failUnprepare) {
      throw new IllegalStateException("device busy");
    }
    unpreparedDevices.put(claim.uid(), devices);
  }
}
