/**
 * The demo behind the README's first command: the example plugins ({@code fpga}, {@code nic},
 * {@code infiniband}) on a generated sysfs tree, against the fake kubelet, in one process over real
 * Unix sockets. Entry point: {@link io.github.deviceplugin4j.examples.demo.Demo}.
 */
package io.github.deviceplugin4j.examples.demo;
