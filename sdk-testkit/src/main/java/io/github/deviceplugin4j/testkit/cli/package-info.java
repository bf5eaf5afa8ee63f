/**
 * The {@code fake-kubelet} command: {@code serve} runs a fake kubelet for shell-driven CI and
 * prints its events as JSON lines; {@code conform} starts a device plugin process (any language)
 * and runs a conformance suite against it, printing a report and writing JUnit XML.
 *
 * <pre>
 * java -jar deviceplugin4j-testkit-VERSION-cli.jar conform --dir /tmp/dp --junit-xml report.xml \
 *     -- ./my-plugin --kubelet-dir {dir}
 * </pre>
 *
 * <p>The entry point is {@link io.github.deviceplugin4j.testkit.cli.Main}.
 */
package io.github.deviceplugin4j.testkit.cli;
