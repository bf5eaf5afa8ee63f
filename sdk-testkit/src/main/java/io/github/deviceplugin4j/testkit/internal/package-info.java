/**
 * Internals of the testkit: Unix-socket gRPC plumbing, the kubelet's validation rules, the registry
 * watcher and the PodResources service. Not an API: anything here may change in any release.
 */
package io.github.deviceplugin4j.testkit.internal;
