package io.boxline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class TaskSettingsTest {
  @Test
  void defaultsAreSixteenPartitionsSevenDaysJsonAndNoAutoUnblock() {
    TaskSettings d = TaskSettings.defaults();
    assertThat(d.partitions()).isEqualTo(Tasks.PARTITIONS);
    assertThat(d.retention()).isEqualTo(RetentionPolicy.byAge(Duration.ofDays(7)));
    assertThat(d.codec().contentType()).isEqualTo(PayloadCodec.json().contentType());
    assertThat(d.autoUnblockAfter()).isNull();
    assertThat(d.autoUnblockInterval()).isEqualTo(Duration.ofMinutes(1));
    assertThat(d.autoUnblockBatch()).isEqualTo(100);
  }

  @Test
  void eachSettingIsACopyAndTheDefaultsStay() {
    TaskSettings s = TaskSettings.defaults().partitions(3).autoUnblockAfter(Duration.ofHours(1));
    assertThat(s.partitions()).isEqualTo(3);
    assertThat(s.autoUnblockAfter()).isEqualTo(Duration.ofHours(1));
    assertThat(TaskSettings.defaults().partitions()).isEqualTo(Tasks.PARTITIONS);
    assertThat(TaskSettings.defaults().autoUnblockAfter()).isNull();
  }

  @Test
  void badValuesAreRefusedWithTheirNameAndRange() {
    assertThatThrownBy(() -> TaskSettings.defaults().partitions(65_537))
        .isInstanceOf(ValidationException.class)
        .hasMessage("TaskSettings.partitions must be between 1 and 65536, got 65537");
    assertThatThrownBy(() -> TaskSettings.defaults().autoUnblockAfter(Duration.ofMillis(10)))
        .isInstanceOf(ValidationException.class)
        .hasMessage("TaskSettings.autoUnblockAfter must be between 1 s and 365 days, got PT0.01S");
    assertThatThrownBy(() -> TaskSettings.defaults().autoUnblockInterval(Duration.ofMillis(10)))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("TaskSettings.autoUnblockInterval must be between 100 ms and 1 day");
    assertThatThrownBy(() -> TaskSettings.defaults().autoUnblockBatch(0))
        .isInstanceOf(ValidationException.class)
        .hasMessage("TaskSettings.autoUnblockBatch must be between 1 and 10000, got 0");
    assertThatThrownBy(() -> TaskSettings.defaults().retention(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("RetentionPolicy.forever()");
  }

  @Test
  void optionsMadeTheOldWayHaveNoCodec() {
    TaskOptions o = new TaskOptions("idem", "key", null);
    assertThat(o.codec()).isNull();
    assertThat(o.orderingKey("k2").idempotencyKey()).isEqualTo("idem");
    assertThat(TaskOptions.options().codec(PayloadCodec.json()).orderingKey("k").codec())
        .isSameAs(PayloadCodec.json());
  }
}
