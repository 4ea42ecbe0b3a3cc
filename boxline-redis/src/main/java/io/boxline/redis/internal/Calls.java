package io.boxline.redis.internal;

import io.boxline.StoreException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waits for Lettuce futures with a bound, and turns every failure into an unchecked {@link
 * StoreException} naming the operation and the server (never its password), with a hint where
 * Redis's answer has a usual cause. Never lets {@link InterruptedException} or {@link
 * ExecutionException} escape (an interrupt is kept as the thread's interrupt flag).
 */
public final class Calls {
  /** Lettuce's own command timeout fires first and says more; this is the backstop. */
  private static final long MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  private final String target;
  private final Duration timeout;

  public Calls(String target, Duration timeout) {
    this.target = target;
    this.timeout = timeout;
  }

  public <T> T await(String operation, Future<T> f) {
    try {
      return f.get(timeout.toNanos() + MARGIN_NANOS, TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new StoreException(message(operation, "no answer within " + timeout), e);
    } catch (ExecutionException | CompletionException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new StoreException(message(operation, describe(cause)), cause);
    } catch (CancellationException e) {
      throw new StoreException(message(operation, "cancelled"), e);
    } catch (InterruptedException e) {
      f.cancel(true);
      Thread.currentThread().interrupt();
      throw new StoreException(message(operation, "interrupted"), e);
    }
  }

  public StoreException failure(String operation, String problem) {
    return new StoreException(message(operation, problem), null);
  }

  public StoreException failure(String operation, Throwable cause) {
    return new StoreException(message(operation, describe(cause)), cause);
  }

  public String message(String operation, String problem) {
    return "Redis coordination at " + target + ": " + operation + " failed: " + problem;
  }

  /** Whether Redis answered that it does not know a script (send its text then). */
  public static boolean noScript(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      String m = c.getMessage();
      if (m != null && m.startsWith("NOSCRIPT")) {
        return true;
      }
    }
    return false;
  }

  static String describe(Throwable t) {
    String text = text(t);
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      String m = text(c);
      String hint = hint(c, m);
      if (hint != null) {
        return text.equals(m) ? text + " (" + hint + ")" : text + ": " + m + " (" + hint + ")";
      }
    }
    return text;
  }

  private static String hint(Throwable c, String m) {
    if (c instanceof java.net.ConnectException
        || c instanceof java.net.UnknownHostException
        || m.contains("Connection refused")
        || m.contains("Currently not connected")) {
      return "is Redis running and reachable there? Check the uri";
    }
    if (m.startsWith("NOAUTH") || m.startsWith("WRONGPASS") || m.contains("invalid password")) {
      return "put the credentials in the uri: redis://:password@host:6379, or"
          + " redis://user:password@host:6379 for an ACL user";
    }
    if (m.startsWith("NOPERM") || m.contains("can't run this command")) {
      return "the Redis ACL user needs '~<keyPrefix>*' and '+@read +@write +@scripting +time"
          + " +@connection': the scripts' own commands are checked too";
    }
    if (m.startsWith("MOVED") || m.startsWith("ASK ") || m.startsWith("CROSSSLOT")) {
      return "this is a Redis Cluster node; boxline-redis needs a standalone Redis, or one behind"
          + " Sentinel (redis-sentinel://)";
    }
    if (m.startsWith("READONLY")) {
      return "this is a replica; point the uri at the primary, or use redis-sentinel://";
    }
    if (m.startsWith("OOM")) {
      return "Redis reached maxmemory; give it more, or an eviction policy that spares keys"
          + " without a TTL (volatile-lru, noeviction)";
    }
    return null;
  }

  private static String text(Throwable t) {
    String m = t.getMessage();
    return m == null || m.isBlank() ? t.getClass().getName() : m;
  }

  /**
   * The uri as logs may show it: scheme, hosts, database and Sentinel master, without user,
   * password or query parameters.
   */
  public static String display(String uri) {
    int start = uri.indexOf("://");
    if (start < 0) {
      return "(not a URI)";
    }
    start += 3;
    // The hosts begin after the last '@': a password may hold '/' or '@' that nobody encoded.
    int hosts = Math.max(start, uri.lastIndexOf('@') + 1);
    int end = hosts;
    while (end < uri.length() && "/?#".indexOf(uri.charAt(end)) < 0) {
      end++;
    }
    String authority = uri.substring(hosts, end);
    String rest = uri.substring(end);
    int query = rest.indexOf('?');
    if (query >= 0) {
      int fragment = rest.indexOf('#', query);
      rest = rest.substring(0, query) + (fragment < 0 ? "" : rest.substring(fragment));
    }
    return uri.substring(0, start) + authority + rest;
  }
}
