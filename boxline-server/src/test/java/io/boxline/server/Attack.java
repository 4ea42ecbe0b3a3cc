package io.boxline.server;

import io.boxline.server.TwoTenants.Who;
import java.util.List;

/**
 * One request {@link AttackRequests} generated: its number in the run, the caller of B's it is sent
 * as, the route template it was made from, the request itself, its path parameters and its query.
 */
record Attack(
    int index,
    Who who,
    String template,
    RawHttp.Request request,
    List<Attack.Param> params,
    String query) {

  /** A path parameter as sent, with the real name of A's it carries (for the oracle twin). */
  record Param(String name, String encoded, String aReal, String style) {}

  String route() {
    return request.method + " " + template;
  }

  String describe() {
    return "(as " + who + ") " + request.describe();
  }
}
