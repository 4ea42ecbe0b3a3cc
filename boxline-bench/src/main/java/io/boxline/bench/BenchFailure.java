package io.boxline.bench;

/** A correctness check failed (lost, duplicate or out-of-order event …): the run is invalid. */
final class BenchFailure extends RuntimeException {
  private static final long serialVersionUID = 1L;

  BenchFailure(String message) {
    super(message);
  }

  static void check(boolean ok, String message) {
    if (!ok) {
      throw new BenchFailure(message);
    }
  }
}
