package io.github.deviceplugin4j.examples.testing;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.introspect.Annotated;
import com.fasterxml.jackson.databind.introspect.JacksonAnnotationIntrospector;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Reads a manifest into fabric8's typed Kubernetes model, failing on any field the model does not
 * know. fabric8's classes collect unknown fields in an "additionalProperties" map (a Jackson
 * any-setter); this reader switches any-setters off, so an unknown or misspelt field is an error.
 *
 * <pre>{@code
 * DaemonSet ds = StrictYaml.read(Path.of("k8s/daemonset.yaml"), DaemonSet.class);
 * }</pre>
 */
public final class StrictYaml {
  private static final ObjectMapper MAPPER =
      new ObjectMapper(new YAMLFactory())
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .setAnnotationIntrospector(
              new JacksonAnnotationIntrospector() {
                @Override
                public Boolean hasAnySetter(Annotated a) {
                  return Boolean.FALSE;
                }
              });

  private StrictYaml() {}

  /**
   * Reads a YAML file holding one object.
   *
   * @param file the manifest
   * @param type the model class, e.g. {@code DaemonSet.class}
   * @param <T> the model type
   * @return the object
   * @throws IOException when the file cannot be read, is not YAML, or has a field the model lacks
   */
  public static <T> T read(Path file, Class<T> type) throws IOException {
    return MAPPER.readValue(file.toFile(), type);
  }

  /**
   * Reads YAML text holding one object.
   *
   * @param yaml the manifest's text
   * @param type the model class, e.g. {@code Pod.class}
   * @param <T> the model type
   * @return the object
   * @throws IOException when the text is not YAML or has a field the model lacks
   */
  public static <T> T read(String yaml, Class<T> type) throws IOException {
    return MAPPER.readValue(yaml, type);
  }
}
