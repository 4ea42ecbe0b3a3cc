package io.boxline.bench;

/**
 * The consumer-group benchmarks' older entry point (issue 3), kept for the command lines of
 * docs/benchmarks.md. Usage, from the repository root:
 *
 * <pre>
 * ./mvnw -o -q -pl boxline-bench exec:exec -Dexec.executable=java \
 *     -Dexec.args="-cp %classpath io.boxline.bench.GroupBench all"
 * ./mvnw -o -q -pl boxline-bench exec:exec -Dexec.executable=java \
 *     -Dexec.args="-cp %classpath io.boxline.bench.GroupBench g1 --g1.consumers=1,10"
 * </pre>
 *
 * The workloads are {@link G1IdleLoad}, {@link G2Rebalance} and {@link G3Pickup}; every one runs in
 * a database of its own ({@code bench_gf_<workload>_<random>}), dropped at the end. A failed
 * correctness check exits non-zero.
 */
public final class GroupBench {
  private GroupBench() {}

  /** {@link Bench} with the same arguments, {@code all} standing for g1,g2,g3. */
  public static void main(String[] args) throws Exception {
    Bench.main(Bench.alias("groups", args));
  }
}
