package io.boxline;

import java.util.List;

/**
 * A consumer could not join its subscription's group: the group policy's {@link
 * GroupPolicy#maxMembers} consumers are in it already.
 */
public class GroupFullException extends BoxlineException {
  private final String subscription;
  private final List<String> members;

  public GroupFullException(String subscription, int maxMembers, List<String> members) {
    super(
        "consumer group of subscription '"
            + subscription
            + "' is full: it admits "
            + maxMembers
            + " consumers and has "
            + members.size()
            + " "
            + members
            + "; close one of them, or raise maxMembers with"
            + " admin().setGroupPolicy(subscription, policy.withMaxMembers(n))");
    this.subscription = subscription;
    this.members = List.copyOf(members);
  }

  public String subscription() {
    return subscription;
  }

  /** The live members found. */
  public List<String> members() {
    return members;
  }
}
