package io.boxline.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code boxline} command. Every subcommand connects to the database, or to a Boxline server
 * with a token, with the options of {@link Connection} (a flag, an environment variable or a
 * profile file), does one thing and exits with a code from {@link ExitCodes}.
 */
@Command(
    name = "boxline",
    mixinStandardHelpOptions = true,
    scope = CommandLine.ScopeType.INHERIT, // every subcommand has --help and --version
    versionProvider = BoxlineCli.Version.class,
    description =
        "Inspect and operate Boxline: topics, subscriptions, groups, lag, retries and dead letters;"
            + " tail, publish and consume events from a terminal.",
    subcommands = {
      InspectCommands.Status.class,
      InspectCommands.Topics.class,
      InspectCommands.Subscriptions.class,
      InspectCommands.Members.class,
      InspectCommands.Lag.class,
      InspectCommands.Retries.class,
      DeadLetterCommands.class,
      TailCommand.class,
      PublishCommand.class,
      ConsumeCommand.class,
      ChangeCommands.Create.class,
      ChangeCommands.Delete.class,
      RenameCommand.class,
      ChangeCommands.Rewind.class,
      ChangeCommands.Retention.class,
      ChangeCommands.GroupPolicyCommand.class,
      ChangeCommands.Migrate.class,
      CompletionCommand.class,
      CommandLine.HelpCommand.class
    },
    footer = {
      "%nConnection: --url (a database) or --server (a Boxline server), else",
      "  BOXLINE_URL or BOXLINE_SERVER, else url= or server= in the profile file",
      "  ~/.config/boxline/<profile>.properties (--profile or BOXLINE_PROFILE;",
      "  default 'default'). The password comes from BOXLINE_PASSWORD and the",
      "  server's token from BOXLINE_TOKEN, or --password / --token asks for it;",
      "  neither is ever printed. migrate needs the database.",
      "",
      "Exit codes: 0 done, 1 failed, 2 bad usage, 3 not found, 4 refused (busy,",
      "  conflict, not confirmed), 5 cannot connect (URL, credentials, schema),",
      "  130 interrupted (Ctrl-C), 143 terminated (SIGTERM)."
    })
public final class BoxlineCli {

  /** Runs the command line and returns its exit code (what {@link #main} exits with). */
  public static int run(String... args) {
    return commandLine().execute(args);
  }

  static CommandLine commandLine() {
    CommandLine cl = new CommandLine(new BoxlineCli());
    cl.setExecutionExceptionHandler(new Failures());
    cl.setParameterExceptionHandler(Failures::usage);
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    // Durations are written as in the server's config and API: 500ms, 30s, 5m, 2h, 7d or PT0.5S.
    cl.registerConverter(
        java.time.Duration.class,
        text -> {
          try {
            return io.boxline.Names.duration(text);
          } catch (io.boxline.ValidationException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
          }
        });
    cl.setUsageHelpAutoWidth(true);
    return cl;
  }

  public static void main(String[] args) {
    Logging.quiet();
    System.exit(run(args));
  }

  /** The version from the jar's manifest (development builds: "development"). */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = BoxlineCli.class.getPackage().getImplementationVersion();
      return new String[] {"boxline " + (v == null ? "development" : v)};
    }
  }
}
