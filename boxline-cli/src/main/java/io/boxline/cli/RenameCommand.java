package io.boxline.cli;

import io.boxline.Admin;
import io.boxline.SubscriptionInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code boxline rename-subscription FROM TO}: a subscription under a new name, state kept. */
@Command(
    name = "rename-subscription",
    description =
        "Give a subscription a new name, keeping its cursors, retries, dead letters and group"
            + " policy; for example to move it into a namespace. Its consumers must be stopped.",
    footer = {"%nExample:%n  boxline rename-subscription audit acme/billing/audit"})
final class RenameCommand extends InspectCommands.Base {
  @Parameters(index = "0", paramLabel = "FROM")
  String from;

  @Parameters(index = "1", paramLabel = "TO")
  String to;

  @Override
  void run(Admin admin, Connection.Session session) {
    SubscriptionInfo s = admin.renameSubscription(from, to);
    out().println("subscription " + from + " is now " + s.name());
    out().flush();
  }
}
