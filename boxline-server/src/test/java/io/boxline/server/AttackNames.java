package io.boxline.server;

import static io.boxline.server.Api.enc;

import io.boxline.server.Attack.Param;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Names for the attack's path parameters, queries and bodies: A's real names, B's own and made-up
 * ones, each also mutated, in forms a careless parser might take for the real one, and encoded in
 * several styles; positions to tail and page from.
 */
final class AttackNames extends AttackDice {
  final TwoTenants tenants;

  AttackNames(AttackDice dice, TwoTenants tenants) {
    super(dice.rnd);
    this.tenants = tenants;
  }

  /** {@code s} URL-decoded once, a '+' kept as a plus; as it is when it does not decode. */
  static String decode(String s) {
    try {
      return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return s;
    }
  }

  /**
   * {@code decoded} URL-encoded in a {@link #style()}: as usual, slashes raw or lower case, twice,
   * or every byte.
   */
  static String encodeStyled(String decoded, String style) {
    String std = enc(decoded).replace("+", "%20");
    switch (style) {
      case "raw-slash":
        return std.replace("%2F", "/");
      case "lower":
        return std.replace("%2F", "%2f");
      case "double":
        return std.replace("%", "%25");
      case "every-byte":
        StringBuilder sb = new StringBuilder();
        for (byte x : decoded.getBytes(StandardCharsets.UTF_8)) {
          sb.append(String.format(Locale.ROOT, "%%%02X", x & 0xff));
        }
        return sb.toString();
      default:
        return std;
    }
  }

  String style() {
    int k = rnd.nextInt(100);
    return k < 75
        ? "std"
        : k < 82 ? "raw-slash" : k < 88 ? "lower" : k < 94 ? "double" : "every-byte";
  }

  Param named(String name, String decoded, boolean aReal) {
    String style = style();
    return new Param(name, encodeStyled(decoded, style), aReal ? decoded : null, style);
  }

  Param plain(String name, String encoded) {
    return new Param(name, encoded, null, "std");
  }

  Param topicParam(String method, String template) {
    int k = rnd.nextInt(100);
    if (k < 28) {
      return named("topic", pick(tenants.aTopics), true);
    }
    if (k < 60) {
      List<String> own =
          method.equals("DELETE") && template.equals("/v1/topics/{topic}")
              ? List.of("tb/gone-" + suffix())
              : tenants.bTopics;
      return named("topic", pick(own), false);
    }
    if (k < 76) {
      return named("topic", mutate(pick(tenants.aTopics)), false);
    }
    if (k < 87) {
      return named(
          "topic",
          pick(
              "ta/nothing-" + suffix(),
              "tb/" + suffix(),
              suffix(),
              "*",
              "tb",
              "ta",
              tenants.aNamespaces.get(1),
              "tb/" + suffix() + "/" + suffix(),
              "ta/*",
              "*/secret-orders-" + tenants.rA),
          false);
    }
    return named("topic", odd(pick(tenants.aTopics)), false);
  }

  Param subscriptionParam(String method, String template, boolean consume) {
    int k = rnd.nextInt(100);
    if (consume && k < (template.endsWith("/settle") ? 65 : 45)) {
      return named("subscription", pick(tenants.bCoreSubs), false);
    }
    if (k < 30) {
      List<String> all = new ArrayList<>(tenants.aSubs);
      all.addAll(tenants.aSubBare);
      tenants.aSubBare.forEach(s -> all.add("ta/" + s));
      String s = pick(all);
      return named("subscription", s, true);
    }
    if (k < 55) {
      boolean destructive =
          method.equals("DELETE") && template.equals("/v1/subscriptions/{subscription}");
      List<String> own = new ArrayList<>(tenants.bSubs);
      own.addAll(tenants.bSubBare);
      if (destructive) {
        own.removeAll(tenants.bCoreSubs);
        own.removeAll(tenants.bSubBare);
        own.add("tb/gone-" + suffix());
      }
      return named("subscription", pick(own), false);
    }
    if (k < 72) {
      return named(
          "subscription", mutate(pick(chance(50) ? tenants.aSubs : tenants.aSubBare)), false);
    }
    if (k < 85) {
      return named(
          "subscription",
          pick(suffix(), "tb/" + suffix(), "ta/" + suffix(), "*", "ta", "%", "a b"),
          false);
    }
    return named("subscription", odd(pick(tenants.aSubs)), false);
  }

  Param memberParam(String subscription) {
    int k = rnd.nextInt(100);
    boolean own = subscription != null && tenants.bCoreSubs.contains(subscription);
    if (own && k < 50) {
      return plain("member", enc(pick(tenants.bMembers)));
    }
    if (k < 25) {
      return plain("member", enc(pick(tenants.aMembers)));
    }
    if (k < 45) {
      return plain("member", enc(pick(tenants.bMembers)));
    }
    if (k < 60) {
      return plain("member", enc(mutate(pick(tenants.aMembers))));
    }
    if (k < 85) {
      return plain("member", "m-" + suffix());
    }
    return plain(
        "member",
        pick(
            "bad%20id", "x".repeat(101), "m%2F1", "..", "m%00", "%C3%BC", ":", "-", "*", "%2E%2E"));
  }

  Param namespaceParam() {
    int k = rnd.nextInt(100);
    if (k < 35) {
      return named("namespace", pick(tenants.aNamespaces), true);
    }
    if (k < 50) {
      return named("namespace", pick("tb", "tb/empty-" + suffix()), false);
    }
    if (k < 75) {
      return named("namespace", mutate(pick(tenants.aNamespaces)), false);
    }
    return named(
        "namespace",
        pick("*", "TA", "ta/..", "ta/", "/ta", "ta/" + suffix(), suffix(), ".", "ta%00"),
        false);
  }

  /** A name changed a little: case, one character, a prefix or suffix, another tenant's part. */
  String mutate(String s) {
    if (s.isEmpty()) {
      return suffix();
    }
    int i = rnd.nextInt(s.length());
    switch (rnd.nextInt(12)) {
      case 0:
        return s.toUpperCase(Locale.ROOT);
      case 1:
        return Character.toUpperCase(s.charAt(0)) + s.substring(1);
      case 2:
        char c = s.charAt(i);
        char flipped =
            Character.isUpperCase(c) ? Character.toLowerCase(c) : Character.toUpperCase(c);
        return flipped == c ? s + "x" : s.substring(0, i) + flipped + s.substring(i + 1);
      case 3:
        return s.substring(0, i)
            + NAME_CHARS.charAt(rnd.nextInt(NAME_CHARS.length()))
            + s.substring(i + 1);
      case 4:
        return s + pick("x", "-", ".", "_", "0", "/", " ");
      case 5:
        return s.substring(0, s.length() - 1);
      case 6:
        return pick("x", "-", ".", "_", "/", " ") + s;
      case 7:
        return s.replace(tenants.rA, tenants.rB);
      case 8:
        return s.startsWith("ta/") ? "tb/" + s.substring(3) : "tb/" + s;
      case 9:
        return s.replace("/", "//");
      case 10:
        return s + "/" + suffix();
      default:
        return s.substring(0, i) + s.substring(i, i + 1).repeat(2) + s.substring(i + 1);
    }
  }

  /** A name in a form a careless parser might take for the real one. */
  String odd(String s) {
    return pick(
        " " + s,
        s + " ",
        "./" + s,
        s.replace("/", "/./"),
        "tb/../" + s,
        "../" + s,
        s.replace("/", "\\"),
        s + "\u0000",
        s + "\u0000tb",
        "tb/x\u0000" + s,
        s.replace("a", "\u0430"), // Cyrillic a
        s + "%",
        s + "/",
        "/" + s,
        s.toUpperCase(Locale.ROOT),
        s + "\n",
        s + ";tb",
        s + "?x=1",
        s + "#x",
        "x".repeat(300));
  }

  /** A field name misspelt: lower case, plural, a letter left out or two swapped, snake case. */
  String misspell(String s) {
    if (s.length() < 3) {
      return s + "x";
    }
    switch (rnd.nextInt(5)) {
      case 0:
        return s.toLowerCase(Locale.ROOT);
      case 1:
        return s + "s";
      case 2:
        return s.length() < 3 ? s + "x" : s.substring(0, 1) + s.substring(2);
      case 3:
        int i = rnd.nextInt(s.length() - 1);
        return s.substring(0, i) + s.charAt(i + 1) + s.charAt(i) + s.substring(i + 2);
      default:
        return s.replaceAll("([A-Z])", "_$1").toLowerCase(Locale.ROOT);
    }
  }

  /** A tail position, real-looking or not. */
  String position() {
    return pick(
        "0:1",
        "0:1,1:2",
        "0:0",
        "99:1",
        "0:-1",
        "-1:1",
        "0:99999999999999999999",
        "abc",
        "",
        "0:1,0:2",
        "1:1;2:2",
        ",",
        "0:1,",
        "\u00e9:1",
        "0:1".repeat(200));
  }

  /** A namespace/topic/partition/sequence position, as dead letters and retries page by. */
  String position3() {
    return pick(
        pick(tenants.aPositions),
        pick(tenants.bPositions),
        mutate(pick(tenants.aPositions)),
        "x/y/0/1",
        "ta",
        "a/b/c/d/e");
  }
}
