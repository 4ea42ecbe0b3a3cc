package io.boxline.server.internal;

import io.boxline.exec.ProgramLimits;
import io.boxline.server.ServerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * A subscription's {@code handler}: the program the server runs as the subscription's consumer, as
 * written in the config file; {@link #resolve} checks it and fills in the defaults.
 */
record ConfigHandler(
    String exec,
    String directory,
    Map<String, String> environment,
    Long processes,
    Boolean perEvent,
    Duration replyTimeout,
    Duration restartBackoff,
    Duration maxRestartBackoff,
    Duration stopTimeout,
    Limits limits)
    implements ConfigFile.Section<ServerConfig.HandlerSpec> {

  /** Per-process limits; each left out is no limit. */
  @ConfigBinding.Mapping
  record Limits(Long memoryBytes, Duration cpuTime, Long openFiles) {}

  @Override
  public ServerConfig.HandlerSpec resolve(ConfigFile.At at) {
    String command = at.required("exec", exec);
    Optional<Path> dir = Optional.empty();
    if (directory != null) {
      Path d = Path.of(at.required("directory", directory));
      if (!Files.isDirectory(d)) {
        throw at.key("directory")
            .error("'" + directory + "' is not a directory; create it or correct the path");
      }
      dir = Optional.of(d);
    }
    Map<String, String> env = environment == null ? Map.of() : Map.copyOf(environment);
    for (String name : env.keySet()) {
      if (!name.matches("[A-Za-z_][A-Za-z0-9_]*")) {
        throw at.key("environment")
            .key(name)
            .error("is not a variable name; use letters, digits and _, not starting with a digit");
      }
    }
    Duration initial = positive(at, "restartBackoff", restartBackoff, Duration.ofSeconds(1));
    Duration max = positive(at, "maxRestartBackoff", maxRestartBackoff, Duration.ofMinutes(1));
    if (max.compareTo(initial) < 0) {
      throw at.key("maxRestartBackoff")
          .error("is shorter than restartBackoff (" + initial + "); make it at least as long");
    }
    ProgramLimits programLimits =
        limits == null
            ? ProgramLimits.NONE
            : at.key("limits")
                .valid(
                    () ->
                        new ProgramLimits(
                            limits.memoryBytes() == null ? 0 : limits.memoryBytes(),
                            limits.cpuTime() == null ? Duration.ZERO : limits.cpuTime(),
                            limits.openFiles() == null
                                ? 0
                                : (int) Math.min(Integer.MAX_VALUE, limits.openFiles())));
    return new ServerConfig.HandlerSpec(
        command,
        dir,
        env,
        at.between("processes", processes, 1, 1, 64),
        perEvent != null && perEvent,
        positive(at, "replyTimeout", replyTimeout, Duration.ofSeconds(60)),
        initial,
        max,
        positive(at, "stopTimeout", stopTimeout, Duration.ofSeconds(5)),
        programLimits);
  }

  private static Duration positive(ConfigFile.At at, String key, Duration value, Duration dflt) {
    if (value == null) {
      return dflt;
    }
    if (value.isZero()) {
      throw at.key(key).error("must be longer than zero");
    }
    return value;
  }
}
