package io.boxline.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

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

  /** A workload whose options are named {@code <name>.<option>}; see {@link Definition}. */
  static Definition define(String name, Bench.Suite suite) {
    return new Definition(name, suite, name + ".");
  }

  /**
   * Declares a workload's options once: each is named {@code prefix + name} and listed (by {@code
   * --help}) in the order declared, so no option has to be named again in a list. Options that
   * several workloads have (pool, partitions …) read the same everywhere.
   */
  final class Definition {
    private final String name;
    private final Bench.Suite suite;
    private final String prefix;
    private final List<Opt<?>> options = new ArrayList<>();

    Definition(String name, Bench.Suite suite, String prefix) {
      this.name = name;
      this.suite = suite;
      this.prefix = prefix;
    }

    <T> Opt<T> option(String name, String def, String doc, Function<String, T> parser) {
      return add(new Opt<>(prefix + name, def, doc, parser));
    }

    Opt<String> text(String name, String def, String doc) {
      return add(Opt.text(prefix + name, def, doc));
    }

    Opt<Integer> integer(String name, int def, String doc) {
      return add(Opt.integer(prefix + name, def, doc));
    }

    Opt<Double> decimal(String name, double def, String doc) {
      return add(Opt.decimal(prefix + name, def, doc));
    }

    Opt<Boolean> flag(String name, boolean def, String doc) {
      return add(Opt.flag(prefix + name, def, doc));
    }

    Opt<int[]> ints(String name, String def, String doc) {
      return add(Opt.ints(prefix + name, def, doc));
    }

    Opt<List<String>> words(String name, String def, String doc, List<String> allowed) {
      return add(Opt.words(prefix + name, def, doc, allowed));
    }

    Opt<Integer> pool(int def) {
      return integer("pool", def, "pool size");
    }

    Opt<Integer> partitions(int def) {
      return integer("partitions", def, "topic partitions");
    }

    Opt<Integer> producers(int def) {
      return integer("producers", def, "producer threads");
    }

    Opt<Integer> txn(int def) {
      return integer("txn", def, "events per transaction");
    }

    Opt<Integer> concurrency(int def) {
      return integer("concurrency", def, "consumer concurrency");
    }

    private <T> Opt<T> add(Opt<T> option) {
      options.add(option);
      return option;
    }

    /** The workload, with the options declared so far. */
    Workload runs(String description, Body body) {
      return of(name, suite, description, List.copyOf(options), body);
    }
  }
}
