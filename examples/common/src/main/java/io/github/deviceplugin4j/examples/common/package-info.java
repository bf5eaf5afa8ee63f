/**
 * Code the example device plugins share: {@link
 * io.github.deviceplugin4j.examples.common.SysfsBackend} (resource name, poll interval, rescan,
 * problems), {@link io.github.deviceplugin4j.examples.common.Sysfs} (forgiving sysfs readers),
 * {@link io.github.deviceplugin4j.examples.common.PluginCli} (the command line every example
 * shares: picocli with {@code --help}, {@code --version}, exit codes, errors without a stack trace)
 * with {@link io.github.deviceplugin4j.examples.common.EnvironmentDefaults} (options from the
 * environment and a properties file), {@link io.github.deviceplugin4j.examples.common.ProblemLog}
 * and {@link io.github.deviceplugin4j.examples.common.HealthLog} (log a change once, not every
 * poll). A vendor copying one example copies this package too, or inlines the classes it uses.
 */
package io.github.deviceplugin4j.examples.common;
