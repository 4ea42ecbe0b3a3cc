package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What docs/architecture.md promises of deliveries claimed for a committing thread. */
class CommittingThreadTest {
  /** Records what happened to one claimed delivery. */
  private static class Claim implements CommittingThread.Delivery {
    final List<String> log;
    final String name;
    final RuntimeException runFails;
    final Error runErrs;

    Claim(List<String> log, String name, RuntimeException runFails, Error runErrs) {
      this.log = log;
      this.name = name;
      this.runFails = runFails;
      this.runErrs = runErrs;
    }

    @Override
    public void run() {
      log.add(name + " ran");
      if (runFails != null) {
        throw runFails;
      }
      if (runErrs != null) {
        throw runErrs;
      }
    }

    @Override
    public void cancel() {
      log.add(name + " given back");
    }
  }

  @Test
  void aHandOverThatFailsGivesItsClaimsBackAndRunsNothing() {
    List<String> log = new ArrayList<>();
    List<List<CommittingThread.Delivery>> collected = new ArrayList<>();
    assertThatThrownBy(
            () ->
                collected.add(
                    CommittingThread.collect(
                        () -> {
                          CommittingThread.defer(new Claim(log, "a", null, null));
                          CommittingThread.defer(new Claim(log, "b", null, null));
                          throw new IllegalStateException("hand-over failed");
                        })))
        .hasMessage("hand-over failed");
    assertThat(collected).isEmpty();
    assertThat(log).containsExactly("a given back", "b given back");
    assertThat(CommittingThread.collecting()).isFalse();
  }

  @Test
  void everyClaimRunsEvenAfterOneFailedAndTheFirstFailureIsRethrown() {
    List<String> log = new ArrayList<>();
    AssertionError error = new AssertionError("a handler's Error");
    List<CommittingThread.Delivery> claimed =
        CommittingThread.collect(
            () -> {
              CommittingThread.defer(new Claim(log, "a", null, error));
              CommittingThread.defer(new Claim(log, "b", new IllegalStateException("b"), null));
              CommittingThread.defer(new Claim(log, "c", null, null));
            });
    assertThat(CommittingThread.collecting()).as("only during the hand-over").isFalse();
    assertThatThrownBy(() -> CommittingThread.run(claimed)).isSameAs(error);
    assertThat(log).containsExactly("a ran", "b ran", "c ran");
  }

  @Test
  void handlersDoNotCollectForTheirOwnTransactions() {
    List<String> log = new ArrayList<>();
    List<Boolean> collectingInside = new ArrayList<>();
    List<CommittingThread.Delivery> claimed =
        CommittingThread.collect(
            () ->
                CommittingThread.defer(
                    new Claim(log, "outer", null, null) {
                      @Override
                      public void run() {
                        super.run();
                        // A transaction the handler runs: its hand-over collects nothing.
                        assertThat(
                                CommittingThread.collect(
                                    () -> collectingInside.add(CommittingThread.collecting())))
                            .isEmpty();
                      }
                    }));
    CommittingThread.run(claimed);
    CommittingThread.runAsWorker(
        () ->
            assertThat(
                    CommittingThread.collect(
                        () -> collectingInside.add(CommittingThread.collecting())))
                .isEmpty());
    assertThat(log).containsExactly("outer ran");
    assertThat(collectingInside).containsExactly(false, false);
    assertThatThrownBy(() -> CommittingThread.defer(new Claim(log, "late", null, null)))
        .isInstanceOf(IllegalStateException.class);
  }
}
