package io.boxline.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Producer threads: {@code threads} of them, named {@code producer-<n>}, each running the same body
 * with its number; the first failure is kept (bodies may stop early on {@link #failed()}).
 */
final class Workers {
  @FunctionalInterface
  interface Body {
    void run(int thread) throws Exception;
  }

  private final List<Thread> threads = new ArrayList<>();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();

  /** Starts the threads; {@link #join} waits for them. */
  Workers start(int count, Body body) {
    for (int t = 0; t < count; t++) {
      int me = t;
      Thread th =
          new Thread(
              () -> {
                try {
                  body.run(me);
                } catch (Throwable e) {
                  failure.compareAndSet(null, e);
                }
              },
              "producer-" + t);
      threads.add(th);
      th.start();
    }
    return this;
  }

  boolean failed() {
    return failure.get() != null;
  }

  /** The first failure, or null. */
  Throwable failure() {
    return failure.get();
  }

  /** Records a failure of something that works alongside (kept if it is the first). */
  void fail(Throwable e) {
    failure.compareAndSet(null, e);
  }

  /** Waits for every thread. */
  void await() throws InterruptedException {
    for (Thread th : threads) {
      th.join();
    }
  }

  /** Waits for every thread; throws the first failure as an IllegalStateException. */
  void join() throws InterruptedException {
    await();
    if (failed()) {
      throw new IllegalStateException("producer failed: " + failure.get(), failure.get());
    }
  }
}
