package io.boxline.chaos;

import java.time.Duration;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Settings of a chaos run, from {@code key=value} arguments (a leading {@code --} is accepted too).
 * The chaos phase lasts {@code seconds}, and longer while fewer than {@code events} events are
 * committed (0: no target).
 */
@Command(name = "ChaosMain", mixinStandardHelpOptions = true, description = "The chaos run.")
final class ChaosOptions {
  @Option(
      names = {"seed", "--seed"},
      description = "random and printed when left out")
  long seed = System.nanoTime() & 0xffffffL;

  @Option(
      names = {"db", "--db"},
      description =
          "postgresql, mariadb (a private mariadbd of the run, crashed and restarted) or mariadb-shared (the machine's, never restarted)")
  String db = "postgresql";

  @Option(
      names = {"seconds", "--seconds"},
      description = "least length of the chaos phase")
  int seconds = 60;

  @Option(
      names = {"events", "--events"},
      description = "go on until this many are committed")
  long events;

  @Option(names = {"producers", "--producers"})
  int producers = 2;

  @Option(names = {"threads", "--threads"})
  int producerThreads = 2;

  @Option(
      names = {"rate", "--rate"},
      description = "events per second per producer")
  int producerRate = 150;

  @Option(
      names = {"maxEvents", "--maxEvents"},
      description = "most events per transaction")
  int maxEventsPerTransaction = 4;

  @Option(
      names = {"keys", "--keys"},
      description = "keys per producer thread")
  int keysPerThread = 20;

  @Option(names = {"consumers", "--consumers"})
  int consumers = 2;

  @Option(names = {"relays", "--relays"})
  int relays = 1;

  @Option(names = {"workers", "--workers"})
  int workers = 1;

  @Option(names = {"batch", "--batch"})
  int batch = 20;

  @Option(names = {"concurrency", "--concurrency"})
  int concurrency = 2;

  @Option(
      names = {"faultEvery", "--faultEvery"},
      description = "mean seconds between faults")
  double faultEverySeconds = 3;

  @Option(
      names = {"drain", "--drain"},
      description = "bound on the wait for the backlog (s)")
  int drainSeconds = 180;

  @Option(
      names = {"progress", "--progress"},
      description = "seconds between progress lines")
  int progressSeconds = 5;

  private CommandLine cli;

  /** Parses {@code argv}; throws {@link CommandLine.ParameterException} on an unknown option. */
  static ChaosOptions parse(String... argv) {
    ChaosOptions options = new ChaosOptions();
    options.cli = new CommandLine(options);
    options.cli.parseArgs(argv);
    return options;
  }

  /** Null unless help or the version was asked for: the usage text then. */
  String help() {
    return cli.isUsageHelpRequested() ? cli.getUsageMessage() : null;
  }

  Duration chaosTime() {
    return Duration.ofSeconds(seconds);
  }

  /** The arguments that reproduce this run (the seed included). */
  String commandLine() {
    return cli.getCommandSpec().options().stream()
        .filter(o -> !o.usageHelp() && !o.versionHelp())
        .map(o -> o.names()[0] + "=" + o.getValue())
        .collect(Collectors.joining(" "));
  }
}
