/**
 * JUnit 5 support for testing DRA drivers without a cluster: {@link
 * io.github.deviceplugin4j.dra.testkit.DraTest @DraTest} gives each test the testkit's fake kubelet
 * (watching a plugins registry) and fabric8's mock API server in CRUD mode, both closed after the
 * test. The cluster plays the scheduler ({@link io.github.deviceplugin4j.dra.testkit.DraScheduler}:
 * claims allocated from the published slices like the 1.37 scheduler, pods' extended-resource
 * claims) and the kubelet's pod side ({@link
 * io.github.deviceplugin4j.dra.testkit.DraCluster#preparePod}).
 */
package io.github.deviceplugin4j.dra.testkit;
