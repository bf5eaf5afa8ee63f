package io.github.deviceplugin4j.core.internal.config;

import io.github.deviceplugin4j.core.internal.Listeners;
import io.github.deviceplugin4j.core.internal.Observers;
import io.netty.channel.EventLoopGroup;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What every resource of one host shares: one event loop group, one worker pool, one timer.
 *
 * @param config the configuration
 * @param group the event loop group of every server
 * @param workers vendor code that may block (request path, discovery), engine tasks, and the
 *     outcome of the Register calls; the servers and clients run their calls on the event loop
 * @param timer deadlines, retries, safety checks
 * @param listeners the vendor's listeners
 * @param observers the vendor's observers
 */
public record Shared(
    EngineConfig config,
    EventLoopGroup group,
    ExecutorService workers,
    ScheduledExecutorService timer,
    Listeners listeners,
    Observers observers) {}
