package io.boxline.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * One workload {@link Bench} can run: its name on the command line, its {@link Bench.Suite}, what
 * it measures, the options it reads (beyond those of its suite), and the run itself, which returns
 * its section of the Markdown report.
 */
record Workload(
    String name, Bench.Suite suite, String description, List<Opt<?>> options, Body body) {

  /** The body of a workload: a run's settings and database in, a report section out. */
  @FunctionalInterface
  interface Body {
    String run(Run run) throws Exception;
  }

  String run(Run run) throws Exception {
    return body.run(run);
  }

  /** A workload whose options are named {@code <name>.<option>}; see {@link Definition}. */
  static Definition define(String name, Bench.Suite suite) {
    return new Definition(name, suite);
  }

  /**
   * Declares a workload's options once: each is named {@code <workload>.<name>} and listed (by
   * {@code --help}) in the order declared, so no option has to be named again in a list.
   */
  static final class Definition {
    private final String name;
    private final Bench.Suite suite;
    private final List<Opt<?>> options = new ArrayList<>();

    Definition(String name, Bench.Suite suite) {
      this.name = name;
      this.suite = suite;
    }

    <T> Opt<T> option(String name, String def, String doc, Function<String, T> parser) {
      return add(new Opt<>(this.name + "." + name, def, doc, parser));
    }

    Opt<String> text(String name, String def, String doc) {
      return add(Opt.text(this.name + "." + name, def, doc));
    }

    Opt<Integer> integer(String name, int def, String doc) {
      return add(Opt.integer(this.name + "." + name, def, doc));
    }

    Opt<Double> decimal(String name, double def, String doc) {
      return add(Opt.decimal(this.name + "." + name, def, doc));
    }

    Opt<Boolean> flag(String name, boolean def, String doc) {
      return add(Opt.flag(this.name + "." + name, def, doc));
    }

    Opt<int[]> ints(String name, String def, String doc) {
      return add(Opt.ints(this.name + "." + name, def, doc));
    }

    Opt<List<String>> words(String name, String def, String doc, List<String> allowed) {
      return add(Opt.words(this.name + "." + name, def, doc, allowed));
    }

    private <T> Opt<T> add(Opt<T> option) {
      options.add(option);
      return option;
    }

    /** The workload, with the options declared so far. */
    Workload runs(String description, Body body) {
      return new Workload(name, suite, description, List.copyOf(options), body);
    }
  }
}
