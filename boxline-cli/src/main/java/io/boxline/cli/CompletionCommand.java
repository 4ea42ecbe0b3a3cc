package io.boxline.cli;

import java.util.concurrent.Callable;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/** Prints a bash (and zsh, through bashcompinit) completion script for {@code boxline}. */
@Command(
    name = "completion",
    description = "Print the shell completion script.",
    footer = {
      "%nInstall:",
      "  boxline completion > ~/.local/share/bash-completion/completions/boxline",
      "  or for this shell only: source <(boxline completion)"
    })
final class CompletionCommand implements Callable<Integer> {
  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().getOut().print(AutoComplete.bash("boxline", spec.commandLine().getParent()));
    spec.commandLine().getOut().flush();
    return ExitCodes.OK;
  }
}
