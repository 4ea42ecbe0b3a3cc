package io.boxline.internal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The error text kept with a parked event can be stored on every database. */
class ErrorTextTest {
  @Test
  void aNulAndLoneSurrogatesBecomeReplacementCharactersAndPairsStay() {
    String text =
        ConsumerContext.describe(new IllegalStateException("a\0b \uD83D\uDE00 c\uD800 d\uDC00"));
    assertThat(text)
        .isEqualTo("java.lang.IllegalStateException: a\uFFFDb \uD83D\uDE00 c\uFFFD d\uFFFD");
  }

  @Test
  void aLongMessageIsCutAt2000CharactersWithoutSplittingAPair() {
    String text =
        ConsumerContext.describe(
            new RuntimeException("x".repeat(1967) + "\uD83D\uDE00".repeat(40)));
    assertThat(text).hasSize(2000);
    assertThat(text.chars().filter(c -> Character.isSurrogate((char) c)).count() % 2).isZero();
  }
}
