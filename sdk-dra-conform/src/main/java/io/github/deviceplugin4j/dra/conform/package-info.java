/**
 * {@code fake-kubelet conform --dra} with a Kubernetes API server for the driver under test: {@link
 * io.github.deviceplugin4j.dra.conform.MockDraApiServerProvider} starts fabric8's mock API server
 * in CRUD mode for the run, with the Node the driver runs on, and reads back the ResourceSlices the
 * driver publishes, checked with the API server's validation rules (sdk-dra's {@link
 * io.github.deviceplugin4j.dra.slices.SliceValidation} and the slice-level rules).
 *
 * <p>The module's {@code -cli} jar is the {@code fake-kubelet} command with this provider in it:
 *
 * <pre>
 * java -jar deviceplugin4j-dra-conform-VERSION-cli.jar conform --dra --driver gpu.example.com \
 *     --make-unhealthy 'echo 1 &gt; /tmp/gpu-root/gpu0/ecc_errors' \
 *     -- ./my-driver --node-name {node} --plugin-dir {dir} --registry-dir {registry}
 * </pre>
 *
 * <p>In a test, put this module on the class path and call {@code
 * io.github.deviceplugin4j.testkit.cli.Main.run} with the same arguments.
 */
package io.github.deviceplugin4j.dra.conform;
