package io.github.deviceplugin4j.dra.conform;

import io.fabric8.kubernetes.api.model.resource.v1.ResourcePool;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceSpec;
import io.github.deviceplugin4j.dra.slices.SliceValidation;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * What the API server refuses in a ResourceSlice: the object and slice fields that sdk-dra's
 * publisher always sets itself (name, driver, pool, node selection), checked here as upstream's
 * {@code validateResourceSlice} and {@code validateResourceSliceSpec} do, and everything below them
 * (devices, counters, taints, per-slice limits) with sdk-dra's {@link SliceValidation}, which the
 * SDK applies before it writes.
 */
final class SliceRules {
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  private SliceRules() {}

  /** One sentence per problem, naming the field and the rule; empty when the slice is valid. */
  static List<String> problems(ResourceSlice slice) {
    List<String> out = new ArrayList<>();
    String name = slice.getMetadata() == null ? null : slice.getMetadata().getName();
    if (!dnsSubdomain(name, 253)) {
      out.add("metadata.name '" + name + "' must be a DNS subdomain (at most 253)");
    }
    ResourceSliceSpec spec = slice.getSpec();
    if (!dnsSubdomain(spec.getDriver(), 63)) {
      out.add(
          "spec.driver '"
              + spec.getDriver()
              + "' must be a DNS subdomain of at most 63 characters");
    }
    ResourcePool pool = spec.getPool();
    if (pool == null) {
      out.add("spec.pool is required");
    } else {
      String poolName = pool.getName();
      if (poolName == null || poolName.isEmpty() || poolName.length() > 253) {
        out.add("spec.pool.name '" + poolName + "' must be 1 to 253 characters");
      } else {
        for (String part : poolName.split("/", -1)) {
          if (!dnsSubdomain(part, 253)) {
            out.add(
                "spec.pool.name '"
                    + poolName
                    + "': each part between '/' must be a DNS subdomain, '"
                    + part
                    + "' is not");
            break;
          }
        }
      }
      if (pool.getResourceSliceCount() == null || pool.getResourceSliceCount() <= 0) {
        out.add(
            "spec.pool.resourceSliceCount is "
                + pool.getResourceSliceCount()
                + ", it must be greater than zero");
      }
      if (pool.getGeneration() == null || pool.getGeneration() < 0) {
        out.add("spec.pool.generation is " + pool.getGeneration() + ", it must not be negative");
      }
    }
    int selections = 0;
    selections += spec.getNodeName() != null && !spec.getNodeName().isEmpty() ? 1 : 0;
    selections += spec.getNodeSelector() != null ? 1 : 0;
    selections += Boolean.TRUE.equals(spec.getAllNodes()) ? 1 : 0;
    selections += Boolean.TRUE.equals(spec.getPerDeviceNodeSelection()) ? 1 : 0;
    if (selections != 1) {
      out.add(
          "exactly one of spec.nodeName, spec.nodeSelector, spec.allNodes and"
              + " spec.perDeviceNodeSelection is required, "
              + selections
              + " are set");
    }
    if (spec.getNodeName() != null
        && !spec.getNodeName().isEmpty()
        && !dnsSubdomain(spec.getNodeName(), 253)) {
      out.add("spec.nodeName '" + spec.getNodeName() + "' must be a DNS subdomain");
    }
    // Devices, counter sets and the per-slice limits: what the SDK checks before it writes.
    // The per-device node selection is allowed with spec.perDeviceNodeSelection only.
    List<String> below = SliceValidation.slice(spec);
    if (Boolean.TRUE.equals(spec.getPerDeviceNodeSelection())) {
      below = below.stream().filter(p -> !p.contains("perDeviceNodeSelection")).toList();
    }
    out.addAll(below); // each names its device or counter set, the field and the limit
    return out;
  }

  /** How the slice names its node, for the report (see PublishedSlice#nodeSelection). */
  static String nodeSelection(ResourceSliceSpec spec) {
    if (spec.getNodeName() != null && !spec.getNodeName().isEmpty()) {
      return "nodeName=" + spec.getNodeName();
    }
    if (Boolean.TRUE.equals(spec.getAllNodes())) {
      return "allNodes";
    }
    if (spec.getNodeSelector() != null) {
      return "nodeSelector";
    }
    if (Boolean.TRUE.equals(spec.getPerDeviceNodeSelection())) {
      return "perDeviceNodeSelection";
    }
    return "none";
  }

  private static boolean dnsSubdomain(String s, int max) {
    return s != null && !s.isEmpty() && s.length() <= max && DNS_SUBDOMAIN.matcher(s).matches();
  }
}
