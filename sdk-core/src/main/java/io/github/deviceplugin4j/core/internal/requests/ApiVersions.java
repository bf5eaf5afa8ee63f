package io.github.deviceplugin4j.core.internal.requests;

import java.util.List;

/** The kubelet API versions this SDK speaks, in preference order: the one place they are listed. */
public final class ApiVersions {

  private static final List<ApiAdapter> SUPPORTED = List.of(new V1Beta1Adapter("v1beta1"));

  private ApiVersions() {}

  /** Adapters for every supported version, most preferred first. */
  public static List<ApiAdapter> supported() {
    return SUPPORTED;
  }

  /** The version strings of some adapters, in their order. */
  public static List<String> versions(List<ApiAdapter> adapters) {
    return adapters.stream().map(ApiAdapter::version).toList();
  }
}
