package io.boxline.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

/**
 * The seeded dice of {@link TenantAttackTest}. Every choice of a run, from the tenants' name
 * suffixes to the last header, is drawn from one {@link Random} in a fixed order, so that a seed
 * replays the run (but for what the server hands out meanwhile, such as ack ids); the generators
 * share it by extending this class. A draw added, left out or moved before another changes what
 * every seed replays.
 */
class AttackDice {
  static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  static final String NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789";
  static final String LONE_SURROGATE = "@@lone-surrogate@@";

  final Random rnd;

  AttackDice(Random rnd) {
    this.rnd = rnd;
  }

  String suffix() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      sb.append(NAME_CHARS.charAt(rnd.nextInt(NAME_CHARS.length())));
    }
    return sb.toString();
  }

  <T> T pick(List<T> list) {
    return list.get(rnd.nextInt(list.size()));
  }

  @SafeVarargs
  final <T> T pick(T... items) {
    return items[rnd.nextInt(items.length)];
  }

  @SafeVarargs
  final <T> T pick(Supplier<T>... options) {
    return options[rnd.nextInt(options.length)].get();
  }

  boolean chance(int percent) {
    return rnd.nextInt(100) < percent;
  }

  /** JSON text cannot be built with a lone surrogate: it is written as an escape afterwards. */
  static String withSurrogates(String json) {
    return json.replace(LONE_SURROGATE, "\\ud800");
  }

  JsonNode text(String s) {
    return NODES.textNode(s);
  }

  JsonNode any(Object... options) {
    Object o = options[rnd.nextInt(options.length)];
    return Api.JSON.valueToTree(o);
  }

  /** Any JSON value without A's markers: B's own content. */
  JsonNode anyValue() {
    return anyValue(0);
  }

  JsonNode anyValue(int depth) {
    switch (rnd.nextInt(depth > 3 ? 6 : 9)) {
      case 0:
        return NODES.nullNode();
      case 1:
        return NODES.booleanNode(rnd.nextBoolean());
      case 2:
        return NODES.numberNode(rnd.nextInt(2001) - 1000);
      case 3:
        return NODES.numberNode(pick(1e308, -0.0, 9.007199254740993E15, Double.MIN_VALUE));
      case 4:
        return text(
            pick(
                "b-" + suffix(),
                "",
                "\u0000",
                "\uD83D\uDE00",
                "<script>alert(1)</script>",
                "'; DROP TABLE topic; --",
                "%s%n",
                "x".repeat(2000)));
      case 5:
        return NODES.numberNode(new java.math.BigInteger("123456789012345678901234567890"));
      case 6:
        ArrayNode a = NODES.arrayNode();
        for (int i = rnd.nextInt(4); i > 0; i--) {
          a.add(anyValue(depth + 1));
        }
        return a;
      default:
        ObjectNode o = NODES.objectNode();
        for (int i = rnd.nextInt(4); i > 0; i--) {
          o.set(pick("b", "k", "nested", suffix()), anyValue(depth + 1));
        }
        return o;
    }
  }
}
