package io.boxline.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemberStatusTest {

  @Test
  void whatIsEncodedIsDecodedAgain() {
    MemberStatus s =
        new MemberStatus(
            "web-1",
            "12@web-1",
            List.of(new MemberStatus.Running(3, 1, 10, 19, 10, Instant.ofEpochMilli(1234))));
    assertThat(MemberStatus.decode(s.encode())).isEqualTo(s);
    assertThat(MemberStatus.decode(MemberStatus.UNKNOWN.encode())).isEqualTo(MemberStatus.UNKNOWN);
  }

  @Test
  void linesAreFlattenedLongTextsCutAndAtMostSixteenCallsKept() {
    List<MemberStatus.Running> calls = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      calls.add(new MemberStatus.Running(1, i, i, i, 1, Instant.ofEpochMilli(i)));
    }
    MemberStatus s = new MemberStatus("a\nb", "x".repeat(500), calls);
    assertThat(s.host()).isEqualTo("a b");
    assertThat(s.process()).hasSize(200);
    assertThat(s.running()).hasSize(MemberStatus.MAX_RUNNING);
    assertThat(MemberStatus.decode(s.encode())).isEqualTo(s);
  }

  @Test
  void unknownOrDamagedTextReadsAsLittleAsItCan() {
    assertThat(MemberStatus.decode(null)).isEqualTo(MemberStatus.UNKNOWN);
    assertThat(MemberStatus.decode("{json}")).isEqualTo(MemberStatus.UNKNOWN);
    assertThat(MemberStatus.decode("v1\nh\np\nnot a call"))
        .isEqualTo(new MemberStatus("h", "p", List.of()));
  }
}
