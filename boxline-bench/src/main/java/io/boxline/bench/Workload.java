package io.boxline.bench;

import java.util.List;

/**
 * One workload {@link Bench} can run: its name on the command line, what it measures, the options
 * it reads (beyond those of its {@link Bench.Suite}), and the run itself, which returns its section
 * of the Markdown report.
 */
interface Workload {
  String name();

  String description();

  Bench.Suite suite();

  List<Opt<?>> options();

  String run(Run run) throws Exception;

  /** The body of a workload: a run's settings and database in, a report section out. */
  @FunctionalInterface
  interface Body {
    String run(Run run) throws Exception;
  }

  static Workload of(
      String name, Bench.Suite suite, String description, List<Opt<?>> options, Body body) {
    return new Workload() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public String description() {
        return description;
      }

      @Override
      public Bench.Suite suite() {
        return suite;
      }

      @Override
      public List<Opt<?>> options() {
        return options;
      }

      @Override
      public String run(Run run) throws Exception {
        return body.run(run);
      }
    };
  }
}
