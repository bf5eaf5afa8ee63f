/**
 * The generic device plugin: resources described in a YAML or JSON file (device-node globs, USB and
 * PCI IDs from sysfs, sharing), no code needed. See {@code docs/generic.md}.
 */
package io.github.deviceplugin4j.examples.generic;
