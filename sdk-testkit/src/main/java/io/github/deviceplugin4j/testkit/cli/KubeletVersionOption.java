package io.github.deviceplugin4j.testkit.cli;

import io.github.deviceplugin4j.testkit.KubeletProfile;
import picocli.CommandLine;

/**
 * {@code --kubelet-version}, the same for {@code serve} and {@code conform}: which kubelet the fake
 * models where versions differ ({@link KubeletProfile}).
 */
final class KubeletVersionOption {
  /** The versions accepted, one list for both commands. */
  static final String VERSIONS = "1.26 to 1.37, or latest";

  @CommandLine.Option(
      names = "--kubelet-version",
      paramLabel = "VERSION",
      converter = Converter.class,
      description = {
        "The kubelet to model where versions differ: " + VERSIONS + " (default: latest).",
        "Profiles: 1.26; 1.27-1.31; 1.32-1.33; 1.34-1.36; 1.37 and newer (latest). They differ"
            + " in the start-up cleanup of the plugin directory (up to 1.33 every file but the"
            + " checkpoint, later only sockets), in which connection a stream end closes, and in"
            + " the DRA services known."
      })
  KubeletProfile profile = KubeletProfile.LATEST;

  /** Turns a version into its profile; a wrong one is a usage error that lists the profiles. */
  static final class Converter implements CommandLine.ITypeConverter<KubeletProfile> {
    @Override
    public KubeletProfile convert(String value) {
      try {
        return KubeletProfile.forVersion(value);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }
}
