package io.boxline.bench;

/**
 * The failure-handling benchmarks' older entry point (issue 4), kept for the command lines of
 * docs/benchmarks.md. Usage, from the repository root:
 *
 * <pre>
 * ./mvnw -o -q -pl boxline-bench exec:exec -Dexec.executable=java \
 *     -Dexec.args="-cp %classpath io.boxline.bench.FailureBench all"
 * </pre>
 *
 * The workloads are {@link F1RetryCost} and {@link F2Bloat}; every one runs in a database of its
 * own ({@code bench_gf_<workload>_<random>}), dropped at the end. A failed correctness check exits
 * non-zero.
 */
public final class FailureBench {
  private FailureBench() {}

  /** {@link Bench} with the same arguments, {@code all} standing for f1,f2. */
  public static void main(String[] args) throws Exception {
    Bench.main(Bench.alias("failures", args));
  }
}
