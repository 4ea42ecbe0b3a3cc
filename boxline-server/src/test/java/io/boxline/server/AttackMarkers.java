package io.boxline.server;

import static io.boxline.server.Api.enc;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A's names and markers as an answer may hold them: each by its literal and its encoded form, found
 * with name boundaries; and those B legitimately stored under its own names, which it may see.
 */
final class AttackMarkers {
  /** One of A's names or markers, found in an answer by its literal with name boundaries. */
  record Marker(String kind, String literal, String form, Pattern pattern, boolean adoptable) {}

  static final Pattern ECHO_BOUNDARY_CHARS = Pattern.compile("[A-Za-z0-9._:-]");

  final List<Marker> markers = new ArrayList<>();

  /** Markers B legitimately stored under its own names (a member id, an event id, a key). */
  final Set<String> adopted = new TreeSet<>();

  /** Every name and marker of A's in {@code tenants}. */
  AttackMarkers(TwoTenants tenants) {
    // The namespace is short and common: only as a namespace (followed by a slash, a quote, a
    // bracket or a comma), never inside a longer name such as tb/ta or status.
    markers.add(
        new Marker(
            "namespace",
            "ta",
            "ta",
            Pattern.compile("(?<![A-Za-z0-9._:/%-])ta(?=/|%2F|%2f|\"|'|\\]|,)"),
            false));
    for (String ns : tenants.aNamespaces.subList(1, tenants.aNamespaces.size())) {
      addMarker("namespace", ns, false);
    }
    tenants.aTopics.forEach(t -> addMarker("topic", t, false));
    // The last segment alone too (B may name its own things tb/<the same>: the slash before it
    // keeps those from matching).
    tenants.aTopics.forEach(t -> addMarker("topic", t.substring(t.lastIndexOf('/') + 1), false));
    tenants
        .aNamespaces
        .subList(1, tenants.aNamespaces.size())
        .forEach(n -> addMarker("namespace", n.substring(n.lastIndexOf('/') + 1), false));
    tenants.aSubs.forEach(s -> addMarker("subscription", s, !s.contains("/")));
    tenants.aSubBare.forEach(s -> addMarker("subscription", s, true));
    tenants.aMembers.forEach(m -> addMarker("member", m, true));
    tenants.aEventIds.forEach(id -> addMarker("event-id", id, true));
    tenants.aKeys.forEach(k -> addMarker("key", k, true));
    tenants.aIdemKeys.forEach(k -> addMarker("idempotency-key", k, true));
    tenants.aAcks.forEach(k -> addMarker("ack-id", k, false));
    tenants.aSecrets.keySet().forEach(n -> addMarker("token-name", n, false));
    for (String s :
        List.of(
            tenants.aType,
            tenants.aPayloadMarker,
            tenants.aHeaderKey,
            tenants.aHeaderValue,
            tenants.aSource,
            tenants.aDeadReason,
            tenants.aRetryReason)) {
      addMarker("event-content", s, false);
    }
    // Every secret of A's: a suffix the attacker never has, whatever form a leak takes.
    addMarker("tenant-suffix", tenants.rA, false);
  }

  void addMarker(String kind, String literal, boolean adoptable) {
    for (String form : new LinkedHashSet<>(List.of(literal, enc(literal).replace("+", "%20")))) {
      markers.add(
          new Marker(
              kind,
              literal,
              form,
              Pattern.compile(
                  "(?<![A-Za-z0-9._:/-])(?<!%2F)(?<!%2f)"
                      + Pattern.quote(form)
                      + "(?![A-Za-z0-9._:-])"),
              adoptable));
    }
  }

  int size() {
    return markers.size();
  }

  /** Adopts the adoptable markers among {@code stored}, what B stored under its own names. */
  void adopt(Set<String> stored) {
    for (Marker mk : markers) {
      if (mk.adoptable() && stored.contains(mk.literal())) {
        adopted.add(mk.literal());
      }
    }
  }

  /** A's names in {@code text} that {@code requestText} did not carry, each with its context. */
  List<String> leaks(String requestText, String text) {
    List<String> out = new ArrayList<>();
    Set<String> seen = new TreeSet<>();
    for (Marker mk : markers) {
      if (adopted.contains(mk.literal())
          || seen.contains(mk.literal())
          || !text.contains(mk.form())) {
        continue;
      }
      Matcher m = mk.pattern().matcher(text);
      while (m.find()) {
        if (carried(requestText, m.group())) {
          continue;
        }
        seen.add(mk.literal());
        int from = Math.max(0, m.start() - 60);
        int to = Math.min(text.length(), m.end() + 40);
        out.add(
            mk.kind()
                + " '"
                + m.group()
                + "' in …"
                + text.substring(from, to).replace("\r", "").replace("\n", " | ")
                + "…");
        break;
      }
    }
    return out;
  }

  /** Whether the request carried this literal itself (so an answer may repeat it). */
  static boolean carried(String requestText, String literal) {
    int from = 0;
    while (true) {
      int i = requestText.indexOf(literal, from);
      if (i < 0) {
        return false;
      }
      int end = i + literal.length();
      boolean rightOk =
          end >= requestText.length()
              || !ECHO_BOUNDARY_CHARS.matcher(String.valueOf(requestText.charAt(end))).matches();
      boolean leftOk =
          i == 0
              || !ECHO_BOUNDARY_CHARS.matcher(String.valueOf(requestText.charAt(i - 1))).matches();
      if (rightOk && leftOk) {
        return true;
      }
      from = i + 1;
    }
  }
}
