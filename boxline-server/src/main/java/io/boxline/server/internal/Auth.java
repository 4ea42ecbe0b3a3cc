package io.boxline.server.internal;

import io.boxline.Names;
import io.boxline.NamespacePath;
import io.boxline.SubscriptionInfo;
import io.boxline.TopicName;
import io.boxline.server.ServerConfig;
import io.boxline.server.ServerConfig.Role;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Bearer tokens: who is calling, what their role allows, and which namespaces they may touch. A
 * token's namespaces are prefixes by whole segments ({@code acme} covers {@code acme/billing}, not
 * {@code acme2}); {@code *} covers all and the cluster-wide settings.
 */
final class Auth {
  /** What a request does; each role allows some. */
  enum Action {
    /** GET anything of the admin API. */
    READ,
    /** Redrive or discard dead letters. */
    REDRIVE,
    /** Create, delete, rewind, set retention and policies. */
    MANAGE,
    /** POST events. */
    PUBLISH,
    /** Read and tail events. */
    CONSUME
  }

  /** The caller of one request. */
  static final class Caller {
    final String name;
    final Role role;
    private final List<String> prefixes;
    private final byte[] ackKey;
    private final String memberTag;

    Caller(String name, Role role, List<String> prefixes, byte[] ackKey) {
      this.name = name;
      this.role = role;
      this.prefixes = prefixes;
      this.ackKey = ackKey;
      this.memberTag =
          MEMBER_TAG.matcher(name).matches()
              ? name
              : "t" + java.util.HexFormat.of().formatHex(sha256(name)).substring(0, 12);
    }

    boolean allAccess() {
      return prefixes.contains("*");
    }

    boolean covers(NamespacePath namespace) {
      if (allAccess()) {
        return true;
      }
      String path = namespace.toString();
      for (String p : prefixes) {
        if (path.equals(p) || path.startsWith(p + "/")) {
          return true;
        }
      }
      return false;
    }

    boolean covers(TopicName topic) {
      return covers(topic.namespace());
    }

    boolean coversAll(Collection<TopicName> topics) {
      for (TopicName t : topics) {
        if (!covers(t)) {
          return false;
        }
      }
      return true;
    }

    /**
     * Whether this token may use a subscription: its namespace (when its name has one) and every
     * one of its topics are covered.
     */
    boolean covers(SubscriptionInfo s) {
      return coversSubscriptionName(s.name()) && coversAll(s.topics());
    }

    /** Whether the namespace a subscription name belongs to is covered (plain names: yes). */
    boolean coversSubscriptionName(String name) {
      NamespacePath ns = Names.subscriptionNamespace(name);
      return ns == null || covers(ns);
    }

    /**
     * The answer for a subscription this token may not see, the same whether it exists or not, so
     * that names outside the token's namespaces cannot be probed.
     */
    ApiException hiddenSubscription(String name) {
      if (allAccess()) {
        return ApiException.notFound("subscription '" + Problems.quote(name) + "' does not exist");
      }
      return ApiException.forbidden(
          "token '"
              + name()
              + "' may only touch namespaces "
              + prefixes
              + "; subscription '"
              + Problems.quote(name)
              + "' is outside them or does not exist");
    }

    String name() {
      return name;
    }

    /** A namespace this token covers, for examples in messages. */
    String examplePrefix() {
      return prefixes.stream().filter(p -> !p.equals("*")).findFirst().orElse("acme");
    }

    /** The key that seals this token's ack ids (see {@link AckIds}). */
    byte[] ackKey() {
      return ackKey;
    }

    /**
     * The id the group knows this token's member {@code member} by: the token's name in front, so
     * that the same member id from two tokens names two members.
     */
    String memberId(String member) {
      return memberTag + ":" + member;
    }

    boolean may(Action action) {
      switch (role) {
        case ADMIN:
          return true;
        case OPERATOR:
          return action == Action.READ || action == Action.REDRIVE || action == Action.CONSUME;
        case VIEWER:
          return action == Action.READ;
        case PRODUCER:
          return action == Action.PUBLISH;
        case CONSUMER:
          return action == Action.CONSUME;
        default:
          return false;
      }
    }

    /** 403 unless the role allows {@code action}. */
    void require(Action action) {
      if (!may(action)) {
        throw ApiException.forbidden(
            "token '"
                + name
                + "' has role "
                + role.name().toLowerCase()
                + ", which may not "
                + describe(action));
      }
    }

    /** 403 unless the role allows {@code action} on {@code topic}'s namespace. */
    void require(Action action, TopicName topic) {
      require(action);
      if (!covers(topic)) {
        throw outOfScope(topic.toString());
      }
    }

    void require(Action action, NamespacePath namespace) {
      require(action);
      if (!covers(namespace)) {
        throw outOfScope(namespace.toString());
      }
    }

    void requireAll(Action action, Collection<TopicName> topics, String what) {
      require(action);
      if (!coversAll(topics)) {
        throw outOfScope(what);
      }
    }

    /** Cluster-wide settings: only a token for every namespace. */
    void requireCluster(Action action) {
      require(action);
      if (!allAccess()) {
        throw ApiException.forbidden(
            "token '"
                + name
                + "' is limited to "
                + prefixes
                + "; cluster-wide settings need a token for \"*\"");
      }
    }

    ApiException outOfScope(String what) {
      return ApiException.forbidden(
          "token '"
              + name
              + "' may only touch namespaces "
              + prefixes
              + ", not "
              + Problems.quote(what));
    }

    private static String describe(Action action) {
      switch (action) {
        case READ:
          return "read the admin API";
        case REDRIVE:
          return "redrive or discard dead letters";
        case MANAGE:
          return "create, delete or change anything";
        case PUBLISH:
          return "publish events";
        default:
          return "read events";
      }
    }
  }

  private static final class Known {
    final byte[] hash;
    final Caller caller;

    Known(byte[] hash, Caller caller) {
      this.hash = hash;
      this.caller = caller;
    }
  }

  private static final java.util.regex.Pattern MEMBER_TAG =
      java.util.regex.Pattern.compile("[A-Za-z0-9._-]{1,60}");

  private final List<Known> tokens = new ArrayList<>();
  private final boolean disabled;
  private final Caller anonymous;

  Auth(ServerConfig config) {
    this.disabled = config.authDisabled() && config.tokens().isEmpty();
    for (ServerConfig.Token t : config.tokens()) {
      tokens.add(
          new Known(
              sha256(t.secret()),
              new Caller(
                  t.name(), t.role(), t.namespaces(), sha256("boxline ack id\0" + t.secret()))));
    }
    // Without tokens every caller is an admin; ack ids are still sealed (against accidents, not
    // attackers), with a key every instance on the same database derives alike.
    this.anonymous =
        new Caller(
            "anonymous",
            Role.ADMIN,
            List.of("*"),
            sha256(
                "boxline ack id\0"
                    + config.database().url().orElse("")
                    + "\0"
                    + config.database().schema()));
  }

  /** True when the server has no tokens: every caller is {@link #anonymous()}. */
  boolean disabled() {
    return disabled;
  }

  /** The caller every request is when auth is disabled. */
  Caller anonymous() {
    return anonymous;
  }

  /** The caller of a request with this Authorization header; 401 when there is none that fits. */
  Caller authenticate(String authorization) {
    if (disabled) {
      return anonymous;
    }
    if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
      throw new ApiException(
          401,
          "unauthorized",
          "send the header 'Authorization: Bearer <token>' with a token from the server's config");
    }
    byte[] given = sha256(authorization.substring(7).trim());
    Caller found = null;
    // Compare with every token in constant time, so timing tells nothing about which one is close.
    for (Known k : tokens) {
      if (MessageDigest.isEqual(k.hash, given)) {
        found = k.caller;
      }
    }
    if (found == null) {
      throw new ApiException(401, "unauthorized", "the bearer token is not one this server knows");
    }
    return found;
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
