package io.boxline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class GroupPolicyTest {

  @Test
  void theCheckInIntervalGrowsWithTheGroupUpToTheCap() {
    GroupPolicy p = GroupPolicy.DEFAULT; // 8 check-ins/s for the group, 2 s minimum, 30 s cap
    assertThat(p.checkInInterval(1)).isEqualTo(Duration.ofSeconds(2));
    assertThat(p.checkInInterval(80)).isEqualTo(Duration.ofSeconds(10));
    assertThat(p.checkInInterval(1024)).as("capped").isEqualTo(Duration.ofSeconds(30));
    assertThat(p.deadline(1024)).isEqualTo(Duration.ofSeconds(90));
    assertThat(p.withMaxCheckInInterval(Duration.ofSeconds(5)).checkInInterval(1024))
        .isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void theLimitsAreValidatedWithTheirRule() {
    assertThatThrownBy(() -> GroupPolicy.DEFAULT.withMaxCheckInInterval(Duration.ofSeconds(1)))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("must not be shorter than minCheckInInterval");
    assertThatThrownBy(() -> GroupPolicy.DEFAULT.withMaxMembers(-1))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("maxMembers must be between 1 and 100,000");
    assertThat(GroupPolicy.DEFAULT.maxMembers()).as("no limit by default").isZero();
  }

  @Test
  void aLongerMinimumRaisesTheCapWithIt() {
    GroupPolicy p = GroupPolicy.DEFAULT.withMinCheckInInterval(Duration.ofMinutes(1));
    assertThat(p.maxCheckInInterval()).isEqualTo(Duration.ofMinutes(1));
    assertThat(p.checkInInterval(1)).isEqualTo(Duration.ofMinutes(1));
  }
}
