package io.boxline.server.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.databind.type.MapType;
import com.fasterxml.jackson.databind.util.AccessPattern;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.boxline.BoxlineException;
import io.boxline.Names;
import io.boxline.server.ConfigException;
import java.io.IOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a YAML config into a {@link ConfigFile}: the text is parsed to a tree only to expand {@code
 * ${NAME}} and {@code ${NAME:-default}} in its text values, then bound by Jackson, strictly: an
 * unknown key is refused with the nearest allowed one, a list is no value and a value no list.
 * Scalars are read from their text, as YAML is written: {@code port: 8080}, {@code port: "8080"}
 * and {@code port: ${PORT}} are the same. What the binding refuses becomes a {@link
 * ConfigException} naming the file and the key in one place, {@link #refusal}.
 */
final class ConfigBinding {
  private ConfigBinding() {}

  static final String MAPPING = "must be a mapping of keys to values";
  static final String LIST = "must be a list (write each item on a line starting with '- ')";

  /** {@code ${NAME}} or {@code ${NAME:-default}}. */
  private static final Pattern VARIABLE =
      Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?}");

  private static final YAMLMapper YAML = new YAMLMapper();

  private static final JsonMapper MAPPER =
      JsonMapper.builder()
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .disable(DeserializationFeature.ACCEPT_SINGLE_VALUE_AS_ARRAY)
          .disable(DeserializationFeature.UNWRAP_SINGLE_VALUE_ARRAYS)
          .addModule(
              new SimpleModule("boxline-config")
                  .addDeserializer(String.class, new Scalar<>(s -> s))
                  .addDeserializer(Long.class, new Scalar<>(ConfigBinding::wholeNumber))
                  .addDeserializer(Double.class, new Scalar<>(ConfigBinding::number))
                  .addDeserializer(Boolean.class, new Scalar<>(ConfigBinding::bool))
                  .addDeserializer(Duration.class, new Scalar<>(ConfigBinding::duration))
                  .setDeserializerModifier(new NullMappings()))
          .build();

  private static final ObjectReader FILE = MAPPER.readerFor(ConfigFile.class);

  /** The config in {@code yaml}, its variables expanded from {@code env}. */
  static ConfigFile read(String yaml, String source, Map<String, String> env) {
    JsonNode root;
    try {
      root = YAML.readTree(yaml);
    } catch (JsonProcessingException e) {
      throw new ConfigException(source, "", "is not valid YAML: " + firstLine(e));
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      root = YAML.createObjectNode();
    }
    root = expand(root, "", source, env);
    try {
      return FILE.readValue(root);
    } catch (IOException e) {
      throw refusal(e, source);
    }
  }

  /** A section the file leaves out, read as if written with no keys. */
  static <T> T none(Class<T> type) {
    try {
      return MAPPER.treeToValue(MAPPER.createObjectNode(), type);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code node} with the variables in its text values (not its keys) replaced. */
  private static JsonNode expand(
      JsonNode node, String path, String source, Map<String, String> env) {
    if (node.isTextual()) {
      return TextNode.valueOf(expand(node.textValue(), path, source, env));
    }
    if (node.isObject()) {
      for (Map.Entry<String, JsonNode> e : node.properties()) {
        String key = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
        e.setValue(expand(e.getValue(), key, source, env));
      }
    } else if (node.isArray()) {
      ArrayNode items = (ArrayNode) node;
      for (int i = 0; i < items.size(); i++) {
        items.set(i, expand(items.get(i), path + "[" + i + "]", source, env));
      }
    }
    return node;
  }

  private static String expand(String raw, String path, String source, Map<String, String> env) {
    Matcher m = VARIABLE.matcher(raw);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String value = env.get(m.group(1));
      if (value == null || value.isEmpty()) {
        value = m.group(2);
      }
      if (value == null) {
        throw new ConfigException(
            source,
            path,
            "the environment variable "
                + m.group(1)
                + " is not set; set it, or write ${"
                + m.group(1)
                + ":-default} to give a default");
      }
      m.appendReplacement(out, Matcher.quoteReplacement(value));
    }
    m.appendTail(out);
    return out.toString();
  }

  /**
   * A value read from its text; a list or a mapping is refused. Null is not read: the key is then
   * absent, and {@link ConfigFile} applies its default.
   */
  private static final class Scalar<T> extends JsonDeserializer<T> {
    private final Function<String, T> parse;

    Scalar(Function<String, T> parse) {
      this.parse = parse;
    }

    @Override
    public T deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
      JsonToken t = p.currentToken();
      if (t == JsonToken.START_ARRAY) {
        throw new Refused("must be a single value, not a list");
      }
      if (t == JsonToken.START_OBJECT || t == JsonToken.FIELD_NAME) {
        throw new Refused("must be a single value, not a mapping");
      }
      return parse.apply(p.getText());
    }
  }

  private static Long wholeNumber(String s) {
    try {
      return Long.parseLong(s.replace("_", ""));
    } catch (NumberFormatException e) {
      throw new Refused("must be a whole number, got '" + s + "'");
    }
  }

  private static Double number(String s) {
    try {
      return Double.parseDouble(s);
    } catch (NumberFormatException e) {
      throw new Refused("must be a number, got '" + s + "'");
    }
  }

  private static Boolean bool(String s) {
    if (s.equals("true") || s.equals("false")) {
      return Boolean.parseBoolean(s);
    }
    throw new Refused("must be true or false, got '" + s + "'");
  }

  private static Duration duration(String s) {
    try {
      // Names.duration refuses negative and over-long durations itself, naming the fix.
      return Names.duration(s);
    } catch (BoxlineException e) {
      throw new Refused(e.getMessage());
    } catch (RuntimeException e) {
      throw new Refused(
          "'" + s + "' is not valid; expected a duration such as 250ms, 30s, 5m, 2h or 7d");
    }
  }

  /**
   * Marks a mapping that may be left out but not written empty ({@code http:} with nothing under
   * it, or {@code http: ~}), as a map may not be.
   */
  @Retention(RetentionPolicy.RUNTIME)
  @Target(ElementType.TYPE)
  @interface Mapping {}

  /** Refuses null for a {@link Mapping} and a map; left out, they are absent (null). */
  private static final class NullMappings extends BeanDeserializerModifier {
    private static final long serialVersionUID = 1L;

    @Override
    public JsonDeserializer<?> modifyDeserializer(
        DeserializationConfig config, BeanDescription bean, JsonDeserializer<?> deserializer) {
      return bean.getBeanClass().isAnnotationPresent(Mapping.class)
          ? new NotNull(deserializer)
          : deserializer;
    }

    @Override
    public JsonDeserializer<?> modifyMapDeserializer(
        DeserializationConfig config,
        MapType type,
        BeanDescription bean,
        JsonDeserializer<?> deserializer) {
      return new NotNull(deserializer);
    }
  }

  private static final class NotNull extends DelegatingDeserializer {
    private static final long serialVersionUID = 1L;

    NotNull(JsonDeserializer<?> delegate) {
      super(delegate);
    }

    @Override
    protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> delegate) {
      return new NotNull(delegate);
    }

    @Override
    public Object getNullValue(DeserializationContext ctxt) {
      throw new Refused(MAPPING);
    }

    @Override
    public AccessPattern getNullAccessPattern() {
      return AccessPattern.DYNAMIC;
    }

    @Override
    public Object getAbsentValue(DeserializationContext ctxt) {
      return null;
    }
  }

  /** A value a deserializer refused; the message is the problem, its key added by Jackson. */
  private static final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Refused(String problem) {
      super(problem, null, false, false);
    }
  }

  /** What Jackson refused, as the file, the key (as written: a.b[0].c) and the fix. */
  private static ConfigException refusal(IOException e, String source) {
    if (!(e instanceof JsonMappingException)) {
      return new ConfigException(source, "", "cannot be read: " + e.getMessage());
    }
    JsonMappingException m = (JsonMappingException) e;
    String path = path(m.getPath());
    if (m.getCause() instanceof Refused) {
      return new ConfigException(source, path, m.getCause().getMessage());
    }
    if (m instanceof UnrecognizedPropertyException) {
      Collection<Object> ids = ((UnrecognizedPropertyException) m).getKnownPropertyIds();
      Set<String> allowed = new TreeSet<>();
      ids.forEach(id -> allowed.add(String.valueOf(id)));
      String near =
          ConfigNames.nearest(((UnrecognizedPropertyException) m).getPropertyName(), allowed);
      return new ConfigException(
          source,
          path,
          "unknown key"
              + (near == null ? "." : "; did you mean '" + near + "'?")
              + " Allowed here: "
              + String.join(", ", allowed));
    }
    Class<?> target = m instanceof MismatchedInputException ? targetType(m) : null;
    if (target != null && Collection.class.isAssignableFrom(target)) {
      return new ConfigException(source, path, LIST);
    }
    if (target != null && (Map.class.isAssignableFrom(target) || target.isRecord())) {
      return new ConfigException(source, path, MAPPING);
    }
    return new ConfigException(source, path, "cannot be read: " + firstLine(m));
  }

  private static Class<?> targetType(JsonMappingException m) {
    return ((MismatchedInputException) m).getTargetType();
  }

  private static String path(List<JsonMappingException.Reference> references) {
    StringBuilder b = new StringBuilder();
    for (JsonMappingException.Reference r : references) {
      if (r.getFieldName() != null) {
        b.append(b.length() == 0 ? "" : ".").append(r.getFieldName());
      } else if (r.getIndex() >= 0) {
        b.append('[').append(r.getIndex()).append(']');
      }
    }
    return b.toString();
  }

  private static String firstLine(JsonProcessingException e) {
    String m = e.getOriginalMessage();
    return m == null ? "" : m.lines().findFirst().orElse("");
  }
}
