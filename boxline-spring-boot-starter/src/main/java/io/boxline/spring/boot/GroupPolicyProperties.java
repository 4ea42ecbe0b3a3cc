package io.boxline.spring.boot;

import io.boxline.GroupPolicy;
import java.time.Duration;

/**
 * A consumer group policy under {@code boxline.group-policy} (the cluster's default) or {@code
 * boxline.subscriptions.<name>.group-policy}; unset fields keep the policy in force.
 */
public class GroupPolicyProperties {
  /** Check-ins per minimum interval the group aims for. */
  private Double checkInRate;

  /** The shortest interval between a member's check-ins. */
  private Duration minCheckInInterval;

  /** The longest interval between a member's check-ins, however large the group. */
  private Duration maxCheckInInterval;

  /** A member is gone after this many check-in intervals without one. */
  private Double deadlineMultiplier;

  /** How far a member's share may exceed its fair share before it hands partitions over. */
  private Double slack;

  /** How long a releasing member may finish its batch before the partition is taken. */
  private Duration releaseGrace;

  /** A partition idle this long is released. */
  private Duration idleRelease;

  /** Partitions taken or released per rebalance step. */
  private Integer batchSize;

  /** Members the group admits; a further joiner gets a clear error. */
  private Integer maxMembers;

  boolean isSet() {
    return checkInRate != null
        || minCheckInInterval != null
        || maxCheckInInterval != null
        || deadlineMultiplier != null
        || slack != null
        || releaseGrace != null
        || idleRelease != null
        || batchSize != null
        || maxMembers != null;
  }

  GroupPolicy applyTo(GroupPolicy p) {
    if (checkInRate != null) {
      p = p.withCheckInRate(checkInRate);
    }
    if (minCheckInInterval != null) {
      p = p.withMinCheckInInterval(minCheckInInterval);
    }
    if (maxCheckInInterval != null) {
      p = p.withMaxCheckInInterval(maxCheckInInterval);
    }
    if (deadlineMultiplier != null) {
      p = p.withDeadlineMultiplier(deadlineMultiplier);
    }
    if (slack != null) {
      p = p.withSlack(slack);
    }
    if (releaseGrace != null) {
      p = p.withReleaseGrace(releaseGrace);
    }
    if (idleRelease != null) {
      p = p.withIdleRelease(idleRelease);
    }
    if (batchSize != null) {
      p = p.withBatchSize(batchSize);
    }
    if (maxMembers != null) {
      p = p.withMaxMembers(maxMembers);
    }
    return p;
  }

  public Double getCheckInRate() {
    return checkInRate;
  }

  public void setCheckInRate(Double checkInRate) {
    this.checkInRate = checkInRate;
  }

  public Duration getMinCheckInInterval() {
    return minCheckInInterval;
  }

  public void setMinCheckInInterval(Duration minCheckInInterval) {
    this.minCheckInInterval = minCheckInInterval;
  }

  public Duration getMaxCheckInInterval() {
    return maxCheckInInterval;
  }

  public void setMaxCheckInInterval(Duration maxCheckInInterval) {
    this.maxCheckInInterval = maxCheckInInterval;
  }

  public Double getDeadlineMultiplier() {
    return deadlineMultiplier;
  }

  public void setDeadlineMultiplier(Double deadlineMultiplier) {
    this.deadlineMultiplier = deadlineMultiplier;
  }

  public Double getSlack() {
    return slack;
  }

  public void setSlack(Double slack) {
    this.slack = slack;
  }

  public Duration getReleaseGrace() {
    return releaseGrace;
  }

  public void setReleaseGrace(Duration releaseGrace) {
    this.releaseGrace = releaseGrace;
  }

  public Duration getIdleRelease() {
    return idleRelease;
  }

  public void setIdleRelease(Duration idleRelease) {
    this.idleRelease = idleRelease;
  }

  public Integer getBatchSize() {
    return batchSize;
  }

  public void setBatchSize(Integer batchSize) {
    this.batchSize = batchSize;
  }

  public Integer getMaxMembers() {
    return maxMembers;
  }

  public void setMaxMembers(Integer maxMembers) {
    this.maxMembers = maxMembers;
  }
}
