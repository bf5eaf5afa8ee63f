// tag::module[]
module com.example.modular {
  requires io.github.deviceplugin4j.core;
  // sdk-core stops gracefully on SIGTERM through sun.misc.Signal, which lives in jdk.unsupported.
  requires jdk.unsupported;
  // Only for this test, which starts a fake kubelet in the same process.
  requires io.github.deviceplugin4j.testkit;
}
// end::module[]
