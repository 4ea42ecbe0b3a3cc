package io.boxline.server;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The check every test's answers go through fails on what the API description does not say. */
class ApiContractTest {
  private static final ApiContract CONTRACT = ApiContract.SERVED;
  private static final String JSON = "application/json";
  private static final String TOPIC =
      "{\"name\":\"acme/orders\",\"partitions\":4,\"sequencing\":\"sequencer\","
          + "\"createdAt\":\"2026-11-28T09:00:00Z\"}";

  @Test
  void anAnswerAsDescribedPasses() {
    assertThatCode(
            () ->
                CONTRACT.check(
                    "POST",
                    "/v1/topics",
                    "{\"name\":\"acme/orders\",\"partitions\":4}",
                    201,
                    JSON,
                    TOPIC))
        .doesNotThrowAnyException();
    assertThatCode(
            () ->
                CONTRACT.check(
                    "GET", "/v1/whoami?x=1", 200, JSON, "{\"name\":\"ops\",\"role\":\"viewer\"}"))
        .doesNotThrowAnyException();
  }

  @Test
  void aFieldTheDescriptionDoesNotNameFails() {
    assertThatThrownBy(
            () ->
                CONTRACT.check(
                    "GET",
                    "/v1/whoami",
                    200,
                    JSON,
                    "{\"name\":\"ops\",\"role\":\"admin\",\"secret\":\"s\"}"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("GET /v1/whoami → 200 does not match")
        .hasMessageContaining("secret");
  }

  @Test
  void aValueOutsideTheDescribedOnesFails() {
    assertThatThrownBy(
            () ->
                CONTRACT.check(
                    "GET", "/v1/whoami", 200, JSON, "{\"name\":\"ops\",\"role\":\"root\"}"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("/role");
  }

  @Test
  void aFieldInAnObjectMadeOfPartsFails() {
    // TopicState is Topic plus its own fields (allOf): both parts' fields pass, others fail.
    String state =
        TOPIC.substring(0, TOPIC.length() - 1)
            + ",\"retention\":{\"maxAge\":null,\"keepUnconsumed\":true,"
            + "\"maxEventsPerPartition\":0,\"abandonAfter\":\"7d\"},\"heads\":[0,0,0,0],\"events\":0}";
    assertThatCode(() -> CONTRACT.check("GET", "/v1/topics/acme%2Forders", 200, JSON, state))
        .doesNotThrowAnyException();
    assertThatThrownBy(
            () ->
                CONTRACT.check(
                    "GET",
                    "/v1/topics/acme%2Forders",
                    200,
                    JSON,
                    state.replace("\"heads\"", "\"tails\"")))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("tails");
  }

  @Test
  void aStatusTheOperationDoesNotListFails() {
    assertThatThrownBy(
            () ->
                CONTRACT.check(
                    "GET", "/v1/whoami", 409, JSON, "{\"status\":409,\"error\":\"conflict\"}"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("does not list status 409 for this operation");
  }

  @Test
  void aRouteOrMethodTheDescriptionDoesNotHaveFails() {
    assertThatThrownBy(() -> CONTRACT.check("GET", "/v1/everything", 200, JSON, "{}"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("has no operation GET for this path");
    assertThatThrownBy(() -> CONTRACT.check("PATCH", "/v1/topics", 200, JSON, "{}"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("has no operation PATCH for this path");
  }

  @Test
  void serverWideAnswersPassOnAnyRouteButMustStillBeErrors() {
    String overloaded =
        "{\"status\":503,\"error\":\"overloaded\",\"message\":\"too many requests; retry\"}";
    assertThatCode(() -> CONTRACT.check("GET", "/v1/topics", 503, JSON, overloaded))
        .doesNotThrowAnyException();
    assertThatCode(
            () ->
                CONTRACT.check(
                    "GET",
                    "/v1/everything",
                    404,
                    JSON,
                    "{\"status\":404,\"error\":\"not_found\",\"message\":\"no such route\"}"))
        .doesNotThrowAnyException();
    assertThatThrownBy(() -> CONTRACT.check("GET", "/v1/topics", 503, JSON, "{\"busy\":true}"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("x-server-wide-responses/503");
  }

  @Test
  void anAcceptedRequestWithAFieldTheDescriptionDoesNotNameFails() {
    assertThatThrownBy(
            () ->
                CONTRACT.check(
                    "POST",
                    "/v1/topics",
                    "{\"name\":\"acme/orders\",\"partitions\":4,\"colour\":\"red\"}",
                    201,
                    JSON,
                    TOPIC))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("its request body")
        .hasMessageContaining("colour");
    // A refused request is not held to the description: refusing it is the point.
    assertThatCode(
            () ->
                CONTRACT.check(
                    "POST",
                    "/v1/topics",
                    "{\"colour\":\"red\"}",
                    400,
                    JSON,
                    "{\"status\":400,\"error\":\"bad_request\",\"message\":\"unknown field colour\"}"))
        .doesNotThrowAnyException();
  }
}
