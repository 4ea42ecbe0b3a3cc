package io.boxline.server.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How request bodies are bound: strictly, and every refusal names the field and the fix. */
class RequestBodiesTest {
  private static <T> T bind(String json, Class<T> type) {
    return RequestBodies.bind(json.getBytes(StandardCharsets.UTF_8), type);
  }

  private static void refused(String json, Class<?> type, String message) {
    assertThatThrownBy(() -> bind(json, type))
        .isInstanceOfSatisfying(
            ApiException.class,
            e -> {
              assertThat(e.status).isEqualTo(400);
              assertThat(e.getMessage()).isEqualTo(message);
            });
  }

  @Test
  void aFieldLeftOutIsNullAndAGivenOneIsBound() {
    ApiRequests.NewTopic t =
        bind("{\"name\":\"a/b\",\"partitions\":4}", ApiRequests.NewTopic.class);
    assertThat(t).isEqualTo(new ApiRequests.NewTopic("a/b", 4, null));
  }

  @Test
  void anUnknownFieldIsRefusedWithTheNearestKnownOne() {
    refused(
        "{\"name\":\"a/b\",\"partitons\":4}",
        ApiRequests.NewTopic.class,
        "unknown field 'partitons'; did you mean 'partitions'? Known fields: name, partitions,"
            + " sequencing");
  }

  @Test
  void anUnknownFieldInsideAListNamesItsItem() {
    assertThatThrownBy(
            () ->
                RequestBodies.bindPublish(
                    "{\"events\":[{\"type\":\"T\"},{\"type\":\"T\",\"kee\":\"k\"}]}"
                        .getBytes(StandardCharsets.UTF_8),
                    ApiRequests.Publish.class))
        .hasMessageStartingWith("events[1]: unknown field 'kee'; did you mean 'key'?");
  }

  @Test
  void aNumberIsNotTextAndTextIsNotANumber() {
    refused("{\"name\":5}", ApiRequests.NewNamespace.class, "\"name\" must be a string");
    refused(
        "{\"name\":\"a/b\",\"partitions\":\"4\"}",
        ApiRequests.NewTopic.class,
        "\"partitions\" must be a whole number");
    refused(
        "{\"name\":\"a/b\",\"partitions\":4.5}",
        ApiRequests.NewTopic.class,
        "\"partitions\" must be a whole number");
  }

  @Test
  void aListItemOfTheWrongTypeIsNamedWithItsIndex() {
    refused(
        "{\"name\":\"s\",\"topics\":[\"a/b\",7]}",
        ApiRequests.NewSubscription.class,
        "\"topics[1]\" must be a string");
  }

  @Test
  void aNumberTooLargeForItsFieldIsOutOfRange() {
    refused(
        "{\"name\":\"a/b\",\"partitions\":5000000000}",
        ApiRequests.NewTopic.class,
        "\"partitions\" is out of range");
  }

  @Test
  void durationsAreWrittenAsEverywhereElse() {
    assertThat(bind("{\"idleRelease\":\"500ms\"}", ApiRequests.GroupPolicyBody.class).idleRelease())
        .isEqualTo(Duration.ofMillis(500));
    assertThat(bind("{\"idleRelease\":\"PT2S\"}", ApiRequests.GroupPolicyBody.class).idleRelease())
        .isEqualTo(Duration.ofSeconds(2));
    assertThatThrownBy(() -> bind("{\"idleRelease\":\"5x\"}", ApiRequests.GroupPolicyBody.class))
        .hasMessageStartingWith("\"idleRelease\": '5x' is not a duration");
    refused(
        "{\"idleRelease\":5}",
        ApiRequests.GroupPolicyBody.class,
        "\"idleRelease\" must be a duration such as 500ms, 30s or 5m");
  }

  @Test
  void aBodyThatIsNotAnObjectOrNotJsonIsRefusedAsSuch() {
    refused("[1]", ApiRequests.Target.class, "the body must be a JSON object");
    refused(
        "{\"to\":\"x\",\"to\":\"y\"}",
        ApiRequests.Target.class,
        "the body is not valid JSON: a key appears twice in one object at line 1, column 15");
    refused(
        "{\"to\":\"x\"} {}",
        ApiRequests.Target.class,
        "the body is not valid JSON: something follows the JSON value at line 1, column 12");
  }

  @Test
  void aPublishBodyNotesItsPayloadWithoutReadingItAndMayNestDeeply() {
    String deep = "[".repeat(300) + "]".repeat(300);
    ApiRequests.Publish p =
        RequestBodies.bindPublish(
            ("{\"type\":\"T\",\"payload\":" + deep + "}").getBytes(StandardCharsets.UTF_8),
            ApiRequests.Publish.class);
    assertThat(p.payload()).isTrue();
    assertThat(
            RequestBodies.bindPublish(
                    "{\"type\":\"T\",\"payload\":null}".getBytes(StandardCharsets.UTF_8),
                    ApiRequests.Publish.class)
                .payload())
        .isTrue();
    assertThat(
            RequestBodies.bindPublish(
                    "{\"type\":\"T\"}".getBytes(StandardCharsets.UTF_8), ApiRequests.Publish.class)
                .payload())
        .isNull();
    assertThatThrownBy(
            () -> RequestBodies.tree(("{\"id\":" + deep + "}").getBytes(StandardCharsets.UTF_8)))
        .hasMessageStartingWith("the body is not valid JSON: it is nested too deeply");
  }

  @Test
  void aWebSocketMessageIsChosenByItsOp() {
    assertThat(
            RequestBodies.bind(
                RequestBodies.tree("{\"op\":\"fetch\",\"max\":3}".getBytes(StandardCharsets.UTF_8)),
                ApiRequests.WsMessage.class))
        .isInstanceOfSatisfying(ApiRequests.WsFetch.class, f -> assertThat(f.max()).isEqualTo(3));
    assertThatThrownBy(
            () ->
                RequestBodies.bind(
                    RequestBodies.tree("{\"op\":\"fecth\"}".getBytes(StandardCharsets.UTF_8)),
                    ApiRequests.WsMessage.class))
        .hasMessage("op must be fetch, settle or leave, got 'fecth'");
    assertThatThrownBy(
            () ->
                RequestBodies.bind(
                    RequestBodies.tree("{\"id\":1}".getBytes(StandardCharsets.UTF_8)),
                    ApiRequests.WsMessage.class))
        .hasMessage("a message needs \"op\": fetch, settle or leave");
  }
}
