package io.boxline.demo;

import io.boxline.EventHandler;
import io.boxline.StoreException;
import io.boxline.spi.CoordinationStore;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.logging.Filter;
import java.util.logging.Handler;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Kills a group member inside this JVM the way SIGKILL kills a process. Everything the member does
 * outside itself goes through here: its database connections, its coordination store and its
 * handler. After {@link #kill()} each of those calls parks its thread for good, so the member
 * checks in no more, commits nothing, handles nothing and never leaves its group: the others learn
 * of its death only when its check-in deadline passes, as with a real crash. (The caller also
 * aborts the member's open connections, so the database rolls back what they had begun.) Its
 * threads print nothing more either: a dead process is silent.
 *
 * <p>{@link #reap()} lets the parked threads go, each with an exception, so that the member's
 * remains can be closed at the end of the run.
 */
final class CrashGate {
  private final String member;

  /** Makes {@link #kill()} wait for a handler call that has begun to record its delivery. */
  private final ReentrantReadWriteLock handlerLock = new ReentrantReadWriteLock();

  private final CountDownLatch reaped = new CountDownLatch(1);

  /** The threads that acted for the member: its "process", silenced at the kill. */
  private final Set<Thread> threads = ConcurrentHashMap.newKeySet();

  /** Threads that call through the gate without being the member's: the one that starts it. */
  private final Set<Thread> foreign = ConcurrentHashMap.newKeySet();

  private volatile boolean killed;

  /** Set by {@link #awaitMidBatch}: the next handler call is the member's last. */
  private volatile boolean armed;

  /** When the member's last handler call ended (System.nanoTime()); 0 until then. */
  private final AtomicLong struck = new AtomicLong();

  private final CountDownLatch dying = new CountDownLatch(1);

  CrashGate(String member) {
    this.member = member;
  }

  /** {@code t} is not one of the member's threads, though it may call through the gate. */
  void foreign(Thread t) {
    foreign.add(t);
  }

  private void own(Thread t) {
    if (!foreign.contains(t)) {
      threads.add(t);
    }
  }

  boolean killed() {
    return killed;
  }

  /** {@code target} whose connections stop at the kill. */
  DataSource dataSource(DataSource target) {
    return proxy(
        DataSource.class,
        target,
        method -> method.getName().startsWith("getConnection"),
        () -> new SQLException(member + " was killed"));
  }

  /**
   * {@code target} whose calls stop at the kill. {@code closeTarget}: whether closing the proxy
   * closes {@code target} (not when other members share it, as with memory coordination).
   */
  CoordinationStore coordination(CoordinationStore target, boolean closeTarget) {
    InvocationHandler gated =
        gatedCalls(
            target,
            method -> !method.getDeclaringClass().equals(Object.class),
            () -> new StoreException(member + " was killed", null));
    return (CoordinationStore)
        Proxy.newProxyInstance(
            CoordinationStore.class.getClassLoader(),
            new Class<?>[] {CoordinationStore.class},
            (proxy, method, args) ->
                method.getName().equals("close") && method.getParameterCount() == 0
                    ? closeTarget ? invoke(target, method, args) : null
                    : gated.invoke(proxy, method, args));
  }

  /**
   * {@code target} that handles nothing from the kill on; armed ({@link #awaitMidBatch}), the next
   * call freezes its thread right after its event was handled.
   */
  EventHandler handler(EventHandler target) {
    return event -> {
      own(Thread.currentThread());
      boolean handled = false;
      handlerLock.readLock().lock();
      try {
        if (!killed) {
          target.handle(event);
          handled = true;
        }
      } finally {
        handlerLock.readLock().unlock();
      }
      if (handled && !(armed && struck.compareAndSet(0, System.nanoTime()))) {
        return;
      }
      dying.countDown();
      park(); // killed, or this thread is where the member dies: its batch stays unfinished
      throw new IllegalStateException(member + " was killed");
    };
  }

  /**
   * Arms the gate and waits up to {@code timeout} for a handler call: its thread freezes after its
   * event, in the middle of its batch, and the member is to be {@link #kill killed} now. Returns
   * System.nanoTime() of that moment, or of the timeout.
   */
  long awaitMidBatch(Duration timeout) throws InterruptedException {
    armed = true;
    dying.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    struck.compareAndSet(0, System.nanoTime()); // disarms a late handler call
    return struck.get();
  }

  /**
   * From now on every call through this gate parks its thread. Returns once no handler call is
   * still recording a delivery: what the member handled before its death is known.
   */
  void kill() {
    handlerLock.writeLock().lock();
    try {
      killed = true;
    } finally {
      handlerLock.writeLock().unlock();
    }
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().contains(member)) { // its consumer's threads and its pool's
        own(t);
      }
    }
    threads.forEach(CrashGate::mute);
  }

  /** Lets the parked threads go: each call fails from now on. */
  void reap() {
    reaped.countDown();
  }

  /** Silences {@code t} too (a thread that cleans up after the dead member). */
  void silence(Thread t) {
    threads.add(t);
    mute(t);
  }

  /** No log records from {@code t}, and no stack trace when it dies of an exception. */
  private static void mute(Thread t) {
    Silenced.THREADS.add(t);
    t.setUncaughtExceptionHandler((thread, e) -> {});
  }

  private void enter() {
    own(Thread.currentThread());
    if (killed) {
      park();
    }
  }

  /**
   * Parks the calling thread until {@link #reap()} (or an interrupt); a foreign one goes on at once
   * (the caller then fails its call).
   */
  private void park() {
    Thread self = Thread.currentThread();
    if (foreign.contains(self)) {
      return;
    }
    mute(self);
    try {
      reaped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private interface Failure {
    Exception get();
  }

  private interface Gated {
    boolean test(Method method);
  }

  private <T> T proxy(Class<T> type, T target, Gated gated, Failure failure) {
    return type.cast(
        Proxy.newProxyInstance(
            type.getClassLoader(), new Class<?>[] {type}, gatedCalls(target, gated, failure)));
  }

  private InvocationHandler gatedCalls(Object target, Gated gated, Failure failure) {
    return (proxy, method, args) -> {
      if (gated.test(method)) {
        enter();
        if (killed) {
          throw failure.get(); // reaped, or interrupted while parked
        }
      }
      return invoke(target, method, args);
    };
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /**
   * The threads of killed members, whose log records are dropped: a filter on the handlers of the
   * root logger (Boxline logs through System.Logger, java.util.logging here).
   */
  private static final class Silenced implements Filter {
    static final Set<Thread> THREADS =
        Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    static {
      for (Handler h : Logger.getLogger("").getHandlers()) {
        Filter previous = h.getFilter();
        h.setFilter(new Silenced(previous));
      }
    }

    private final Filter previous;

    private Silenced(Filter previous) {
      this.previous = previous;
    }

    @Override
    public boolean isLoggable(java.util.logging.LogRecord record) {
      if (THREADS.contains(Thread.currentThread())) {
        return false;
      }
      return previous == null || previous.isLoggable(record);
    }
  }
}
