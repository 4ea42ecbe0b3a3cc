package io.boxline.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * The bench's command line, parsed by picocli: {@code --name=value} arguments, checked against the
 * {@link Opt}s of the chosen workloads (an unknown name or an unreadable value is an error before
 * anything runs: each option's value goes through its converter now, not an hour in), read back
 * typed with {@link #get}.
 */
final class Options {
  private final CommandSpec spec;

  private Options(CommandSpec spec) {
    this.spec = spec;
  }

  static Options parse(List<String> args, Collection<Opt<?>> known) {
    CommandSpec spec = CommandSpec.create();
    for (Opt<?> o : known) {
      if (spec.findOption("--" + o.name()) == null) {
        spec.addOption(
            OptionSpec.builder("--" + o.name())
                .type(Object.class)
                .arity("1")
                .converters(o::parse)
                .defaultValue(o.defaultText())
                .description(o.doc())
                .build());
      }
    }
    new CommandLine(spec).parseArgs(args.toArray(new String[0]));
    return new Options(spec);
  }

  /**
   * The value given on the command line, else the option's default (null when it has none); an
   * option the suite does not take (a workload reading another suite's, e.g. --db) has its default.
   */
  @SuppressWarnings("unchecked")
  <T> T get(Opt<T> option) {
    OptionSpec spec = this.spec.findOption("--" + option.name());
    if (spec == null) {
      return option.defaultText() == null ? null : option.parse(option.defaultText());
    }
    return (T) spec.getValue();
  }

  boolean given(Opt<?> option) {
    return spec.findOption("--" + option.name()) != null
        && spec.commandLine().getParseResult().hasMatchedOption("--" + option.name());
  }

  /** One line per option: {@code --name=default doc}. */
  static String help(Collection<Opt<?>> options) {
    List<String> lines = new ArrayList<>();
    for (Opt<?> o : options) {
      String left = "  --" + o.name() + "=" + (o.defaultText() == null ? "" : o.defaultText());
      lines.add(left + " ".repeat(Math.max(2, 34 - left.length())) + o.doc());
    }
    return String.join("\n", lines) + "\n";
  }
}
