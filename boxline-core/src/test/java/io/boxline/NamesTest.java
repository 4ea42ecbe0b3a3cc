package io.boxline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class NamesTest {
  @Test
  void namespacePathsAreValidatedSegmentBySegment() {
    assertThat(NamespacePath.of("acme/billing").segments()).containsExactly("acme", "billing");
    assertThat(NamespacePath.of("acme/billing").parent()).isEqualTo(NamespacePath.of("acme"));
    assertThat(NamespacePath.of("acme").parent()).isNull();
    assertThatThrownBy(() -> NamespacePath.of("acme//x"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("must not be empty");
    assertThatThrownBy(() -> NamespacePath.of("acme/bill ing"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("A-Z a-z 0-9 . _ -");
    assertThatThrownBy(() -> NamespacePath.of("a/".repeat(16) + "a"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("limit is 16");
    assertThatThrownBy(() -> NamespacePath.of("")).isInstanceOf(ValidationException.class);
  }

  @Test
  void subscriptionNamesArePlainOrBelongToANamespace() {
    assertThat(Names.requireSubscriptionName("audit")).isEqualTo("audit");
    assertThat(Names.subscriptionNamespace("audit")).isNull();
    assertThat(Names.requireSubscriptionName("acme/billing/audit")).isEqualTo("acme/billing/audit");
    assertThat(Names.subscriptionNamespace("acme/billing/audit"))
        .isEqualTo(NamespacePath.of("acme/billing"));
    assertThat(SubscriptionSpec.of("ta/audit", TopicName.parse("ta/orders")).name())
        .isEqualTo("ta/audit");
    assertThatThrownBy(() -> Names.requireSubscriptionName("acme//audit"))
        .isInstanceOf(ValidationException.class);
    assertThatThrownBy(() -> Names.requireSubscriptionName("acme/"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("must not be empty");
    assertThatThrownBy(() -> Names.requireSubscriptionName("/audit"))
        .isInstanceOf(ValidationException.class);
    assertThatThrownBy(() -> Names.requireSubscriptionName("a/" + "x".repeat(127)))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("limit is 128");
  }

  @Test
  void topicNamesParseAndAreLimited() {
    TopicName t = TopicName.parse("acme/billing/orders");
    assertThat(t.namespace()).isEqualTo(NamespacePath.of("acme/billing"));
    assertThat(t.name()).isEqualTo("orders");
    assertThat(t).hasToString("acme/billing/orders");
    assertThat(TopicName.of("a", "Orders")).isNotEqualTo(TopicName.of("a", "orders"));
    assertThatThrownBy(() -> TopicName.parse("orders"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("no namespace");
    assertThatThrownBy(() -> TopicName.of("a", "x".repeat(129)))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("limit is 128");
    assertThatThrownBy(() -> TopicName.of("a", "-leading"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("start with a letter or digit");
    assertThatThrownBy(() -> TopicName.of("a", "drop table;"))
        .isInstanceOf(ValidationException.class);
  }

  @Test
  void sqlIdentifiersAreStrict() {
    assertThat(Names.requireSchema("boxline_1")).isEqualTo("boxline_1");
    assertThat(Names.requirePrefix("")).isEmpty();
    assertThatThrownBy(() -> Names.requireSchema("Boxline"))
        .isInstanceOf(ValidationException.class);
    assertThatThrownBy(() -> Names.requireSchema("x; drop schema public"))
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("not a valid identifier");
    assertThatThrownBy(() -> Names.requireSchema("s".repeat(49)))
        .isInstanceOf(ValidationException.class);
    assertThatThrownBy(() -> Names.requirePrefix("bx-")).isInstanceOf(ValidationException.class);
  }

  @Test
  void subscriptionsNeedADistinctNonEmptyTopicList() {
    TopicName t = TopicName.of("a", "t");
    assertThatThrownBy(() -> SubscriptionSpec.of("s")).hasMessageContaining("at least one topic");
    assertThatThrownBy(() -> SubscriptionSpec.of("s", t, t)).hasMessageContaining("twice");
    assertThatThrownBy(() -> SubscriptionSpec.of("bad name", t))
        .isInstanceOf(ValidationException.class);
  }

  @Test
  void builderFailsFastWithExactMessages() {
    assertThatThrownBy(() -> Boxline.builder().build())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("needs a store");
    assertThatThrownBy(() -> OutgoingEvent.builder(TopicName.of("a", "t")).build())
        .isInstanceOf(ValidationException.class)
        .hasMessageContaining("event type must be set");
    assertThatThrownBy(
            () ->
                EventTypes.builder()
                    .register(EventType.of(String.class, "x", TopicName.of("a", "t")))
                    .register(EventType.of(Integer.class, "x", TopicName.of("a", "t"))))
        .hasMessageContaining("registered for both");
  }

  @Test
  void durationsAreWrittenInTheLargestWholeUnitAndReadBack() {
    java.util.Map<java.time.Duration, String> cases = new java.util.LinkedHashMap<>();
    cases.put(java.time.Duration.ZERO, "0s");
    cases.put(java.time.Duration.ofMillis(250), "250ms");
    cases.put(java.time.Duration.ofMillis(1500), "1500ms");
    cases.put(java.time.Duration.ofSeconds(30), "30s");
    cases.put(java.time.Duration.ofSeconds(90), "90s");
    cases.put(java.time.Duration.ofMinutes(5), "5m");
    cases.put(java.time.Duration.ofHours(48), "2d");
    cases.put(java.time.Duration.ofHours(36), "36h");
    cases.put(java.time.Duration.ofNanos(1_500), "PT0.0000015S");
    cases.forEach(
        (d, text) -> {
          org.assertj.core.api.Assertions.assertThat(Names.durationText(d)).isEqualTo(text);
          org.assertj.core.api.Assertions.assertThat(Names.duration(text)).isEqualTo(d);
        });
  }
}
