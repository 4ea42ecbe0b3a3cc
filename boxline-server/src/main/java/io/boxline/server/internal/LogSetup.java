package io.boxline.server.internal;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.jul.LevelChangePropagator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.joran.util.ConfigurationWatchListUtil;
import io.boxline.server.ServerConfig;
import java.util.Map;
import net.logstash.logback.encoder.LogstashEncoder;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The server process's logging: Logback writes every line on standard error in one format, text or
 * JSON. Loaded only when Logback is SLF4J's backend (BoxlineServer checks without loading it): an
 * application that embeds the server keeps its own.
 */
public final class LogSetup {
  /** The logger of the access log: one line per request. */
  public static final String ACCESS_LOGGER = "io.boxline.server.access";

  /**
   * The text format: one line per record, key=value, the record's key-value pairs after the
   * message.
   */
  static final String TEXT_PATTERN =
      "%d{yyyy-MM-dd'T'HH:mm:ss.SSSZ} level=%level logger=%logger msg=\"%msg\"%replace("
          + " %kvp){'^ $', ''}%n";

  private LogSetup() {}

  /**
   * Configures Logback from the config's {@code log} section, unless Logback was configured from a
   * file ({@code -Dlogback.configurationFile=…} or a {@code logback.xml} on the classpath), which
   * then wins; routes java.util.logging into it. Returns false when a file won.
   */
  public static boolean apply(ServerConfig.Log log) {
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    // java.util.logging (the PostgreSQL driver) into SLF4J; System.Logger gets there through
    // slf4j-jdk-platform-logging.
    SLF4JBridgeHandler.removeHandlersForRootLogger();
    SLF4JBridgeHandler.install();
    if (ConfigurationWatchListUtil.getMainWatchURL(ctx) != null) {
      return false;
    }
    ctx.reset();
    LevelChangePropagator jul = new LevelChangePropagator();
    jul.setContext(ctx);
    jul.setResetJUL(true);
    jul.start();
    ctx.addListener(jul);

    Encoder<ILoggingEvent> encoder;
    if (log.format() == ServerConfig.LogFormat.JSON) {
      LogstashEncoder json = new LogstashEncoder();
      json.setContext(ctx);
      json.start();
      encoder = json;
    } else {
      PatternLayoutEncoder text = new PatternLayoutEncoder();
      text.setContext(ctx);
      text.setPattern(TEXT_PATTERN);
      text.start();
      encoder = text;
    }
    ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
    console.setContext(ctx);
    console.setName("console");
    console.setTarget("System.err");
    console.setEncoder(encoder);
    console.start();

    ch.qos.logback.classic.Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.toLevel(log.level(), Level.INFO));
    root.addAppender(console);
    for (Map.Entry<String, String> e : log.levels().entrySet()) {
      ctx.getLogger(e.getKey()).setLevel(Level.toLevel(e.getValue(), Level.INFO));
    }
    if (!log.access()) {
      ctx.getLogger(ACCESS_LOGGER).setLevel(Level.OFF);
    } else if (!log.levels().containsKey(ACCESS_LOGGER)) {
      // On even when the root is at WARN: it is turned off with log.access.
      ctx.getLogger(ACCESS_LOGGER).setLevel(Level.INFO);
    }
    return true;
  }
}
