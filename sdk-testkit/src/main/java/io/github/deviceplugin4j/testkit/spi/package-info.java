/**
 * Service interfaces through which other modules extend the {@code fake-kubelet} command without
 * sdk-testkit depending on them.
 *
 * <p>{@link io.github.deviceplugin4j.testkit.spi.DraApiServerProvider} gives {@code conform --dra}
 * a Kubernetes API server for the driver under test; with one on the class path (found with {@link
 * java.util.ServiceLoader}) the suite also checks the ResourceSlices the driver publishes. The
 * module {@code deviceplugin4j-dra-conform} provides one (fabric8's mock API server) and builds a
 * {@code -cli} jar that has it:
 *
 * <pre>
 * java -jar deviceplugin4j-dra-conform-VERSION-cli.jar conform --dra --driver gpu.example.com \
 *     --make-unhealthy 'echo 1 &gt; /tmp/gpu-root/gpu0/ecc_errors' -- ./my-driver --node {node}
 * </pre>
 *
 * <p>The types here hold plain data only (no Kubernetes client types), so sdk-testkit stays free of
 * a Kubernetes client.
 */
package io.github.deviceplugin4j.testkit.spi;
