package io.boxline.etcd.internal;

import io.boxline.StoreException;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waits for jetcd futures with a bound, and turns every failure into an unchecked {@link
 * StoreException} naming the operation and the endpoints. Never lets {@link InterruptedException}
 * or {@link ExecutionException} escape (an interrupt is kept as the thread's interrupt flag).
 */
public final class Calls {
  private static final long MARGIN_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

  private final String endpoints;
  private final Duration timeout;

  public Calls(String endpoints, Duration timeout) {
    this.endpoints = endpoints;
    this.timeout = timeout;
  }

  public Duration timeout() {
    return timeout;
  }

  /**
   * The result of {@code f}, waiting at most the request timeout (plus a little, so that the gRPC
   * deadline of the call, which says why it failed, usually fires first).
   */
  public <T> T await(String operation, CompletableFuture<T> f) {
    return await(operation, f, deadline());
  }

  private long deadline() {
    return System.nanoTime() + timeout.toNanos() + MARGIN_NANOS;
  }

  private <T> T await(String operation, CompletableFuture<T> f, long deadline) {
    try {
      return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
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

  /**
   * Waits for all of {@code futures} (sent concurrently), sharing one deadline. Each outcome is
   * either a value or the {@link StoreException} that describes its failure; the caller decides.
   */
  public <T> List<Outcome<T>> awaitEach(String operation, List<CompletableFuture<T>> futures) {
    long deadline = deadline();
    List<Outcome<T>> out = new ArrayList<>(futures.size());
    for (CompletableFuture<T> f : futures) {
      try {
        out.add(new Outcome<>(await(operation, f, deadline), null));
      } catch (StoreException e) {
        if (Thread.currentThread().isInterrupted()) {
          futures.forEach(x -> x.cancel(true));
          throw e;
        }
        out.add(new Outcome<>(null, e));
      }
    }
    return out;
  }

  /** One result of {@link #awaitEach}: a value, or a failure. */
  public record Outcome<T>(T value, StoreException failure) {
    public boolean ok() {
      return failure == null;
    }
  }

  public StoreException failure(String operation, String problem) {
    return new StoreException(message(operation, problem), null);
  }

  public String message(String operation, String problem) {
    return "etcd coordination at " + endpoints + ": " + operation + " failed: " + problem;
  }

  private static String describe(Throwable t) {
    String m = t.getMessage();
    String text = m == null || m.isBlank() ? t.getClass().getName() : m;
    // gRPC says only UNAUTHENTICATED; etcd's own reason is further down the causes.
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof StatusRuntimeException se) {
        Status.Code code = se.getStatus().getCode();
        String detail = se.getStatus().getDescription();
        if (detail != null && detail.startsWith("etcdserver: auth")) {
          return text
              + " ("
              + detail
              + "; check EtcdCoordination.builder().user(name, password) and the user's"
              + " permissions on the key prefix)";
        }
        if (code == Status.Code.PERMISSION_DENIED) {
          return text + " (the etcd user may not read or write the key prefix)";
        }
      }
    }
    return text;
  }

  /** Whether {@code t} (or a cause) says that an etcd lease does not exist (any more). */
  public static boolean leaseNotFound(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      String m = c.getMessage();
      if (m != null && m.contains("lease not found")) {
        return true;
      }
      if (c instanceof EtcdException ee
          && ee.getErrorCode() == io.etcd.jetcd.common.exception.ErrorCode.NOT_FOUND) {
        return true;
      }
      if (c instanceof StatusRuntimeException se
          && se.getStatus().getCode() == Status.Code.NOT_FOUND) {
        return true;
      }
    }
    return false;
  }
}
