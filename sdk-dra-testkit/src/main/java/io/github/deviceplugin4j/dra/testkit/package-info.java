/**
 * JUnit 5 support for testing DRA drivers without a cluster: {@link
 * io.github.deviceplugin4j.dra.testkit.DraTest @DraTest} gives each test the testkit's fake kubelet
 * (watching a plugins registry) and fabric8's mock API server in CRUD mode, both closed after the
 * test.
 */
package io.github.deviceplugin4j.dra.testkit;
