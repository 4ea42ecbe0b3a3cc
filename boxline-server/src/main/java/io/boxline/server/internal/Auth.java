package io.boxline.server.internal;

import io.boxline.NamespacePath;
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

    Caller(String name, Role role, List<String> prefixes) {
      this.name = name;
      this.role = role;
      this.prefixes = prefixes;
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
          "token '" + name + "' may only touch namespaces " + prefixes + ", not " + what);
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

  private final List<Known> tokens = new ArrayList<>();
  private final boolean disabled;

  Auth(ServerConfig config) {
    this.disabled = config.authDisabled() && config.tokens().isEmpty();
    for (ServerConfig.Token t : config.tokens()) {
      tokens.add(new Known(sha256(t.secret()), new Caller(t.name(), t.role(), t.namespaces())));
    }
  }

  /** The caller of a request with this Authorization header; 401 when there is none that fits. */
  Caller authenticate(String authorization) {
    if (disabled) {
      return new Caller("anonymous", Role.ADMIN, List.of("*"));
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
