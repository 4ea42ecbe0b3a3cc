package io.boxline.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.boxline.Boxline;
import io.boxline.TopicName;
import io.boxline.testkit.Await;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Start-up against an H2 database of the test's own: what {@code boxline.*} declares, the errors a
 * wrong property gives (the property and the fix), switching Boxline off, and health through the
 * application's life.
 */
class StarterConfigurationTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  bootClass(
                      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
                      "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration"),
                  bootClass(
                      "org.springframework.boot.autoconfigure.jdbc"
                          + ".DataSourceTransactionManagerAutoConfiguration",
                      "org.springframework.boot.jdbc.autoconfigure"
                          + ".DataSourceTransactionManagerAutoConfiguration"),
                  BoxlineAutoConfiguration.class,
                  BoxlineActuatorAutoConfiguration.class,
                  BoxlineHealthAutoConfiguration.class))
          .withPropertyValues(
              "spring.datasource.url=jdbc:h2:mem:boot_"
                  + UUID.randomUUID().toString().replace("-", "")
                  + ";DB_CLOSE_DELAY=-1",
              "boxline.namespaces[0]=acme/shop");

  /** The first of {@code names} on the class path: Boot 4 moved its JDBC configurations. */
  private static Class<?> bootClass(String... names) {
    for (String n : names) {
      try {
        return Class.forName(n);
      } catch (ClassNotFoundException tryNext) {
        // the other Boot line
      }
    }
    throw new IllegalStateException("none of " + String.join(", ", names));
  }

  private static Throwable rootOf(Throwable t) {
    while (t.getCause() != null && !(t instanceof InvalidBoxlinePropertyException)) {
      t = t.getCause();
    }
    return t;
  }

  private static FailureAnalysis analysis(Throwable startup) {
    Throwable t = rootOf(startup);
    assertThat(t).isInstanceOf(InvalidBoxlinePropertyException.class);
    return new InvalidBoxlinePropertyFailureAnalyzer().analyze(startup);
  }

  @Test
  void declaredTopicsAndSubscriptionsAreCreatedAndStartingTwiceChangesNothing() {
    String[] props = {
      "boxline.topics[acme/shop/orders].partitions=3",
      "boxline.topics[acme/shop/ledger].sequencing=IN_TRANSACTION",
      "boxline.topics[acme/shop/ledger].retention=7d",
      "boxline.subscriptions.billing.topics=acme/shop/orders,acme/shop/ledger",
      "boxline.subscriptions.billing.start=latest"
    };
    runner
        .withPropertyValues(props)
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              Boxline b = ctx.getBean(Boxline.class);
              assertThat(
                      b.admin()
                          .topic(TopicName.parse("acme/shop/orders"))
                          .orElseThrow()
                          .partitions())
                  .isEqualTo(3);
              assertThat(
                      b.admin()
                          .topic(TopicName.parse("acme/shop/ledger"))
                          .orElseThrow()
                          .partitions())
                  .isEqualTo(16);
              assertThat(b.admin().subscription("billing").orElseThrow().topics()).hasSize(2);
            });
  }

  @Test
  void groupPoliciesAreSetForTheClusterAndPerSubscription() {
    runner
        .withPropertyValues(
            "boxline.topics[acme/shop/orders].partitions=2",
            "boxline.subscriptions.billing.topics=acme/shop/orders",
            "boxline.subscriptions.billing.group-policy.max-members=7",
            "boxline.subscriptions.billing.group-policy.slack=0.25",
            "boxline.subscriptions.other.topics=acme/shop/orders",
            "boxline.group-policy.max-check-in-interval=20s")
        .run(
            ctx -> {
              assertThat(ctx).hasNotFailed();
              Boxline b = ctx.getBean(Boxline.class);
              assertThat(b.admin().groupPolicy("billing").maxMembers()).isEqualTo(7);
              assertThat(b.admin().groupPolicy("billing").slack()).isEqualTo(0.25);
              assertThat(b.admin().groupPolicy("other").maxCheckInInterval())
                  .as("the cluster's default")
                  .isEqualTo(Duration.ofSeconds(20));
              assertThat(b.admin().groupPolicy("other").maxMembers())
                  .isEqualTo(io.boxline.GroupPolicy.DEFAULT.maxMembers());
            });
    runner
        .withPropertyValues(
            "boxline.topics[acme/shop/orders].partitions=2",
            "boxline.subscriptions.billing.topics=acme/shop/orders",
            "boxline.subscriptions.billing.group-policy.slack=-1")
        .run(
            ctx ->
                assertThat(analysis(ctx.getStartupFailure()).getDescription())
                    .contains("boxline.subscriptions[billing].group-policy"));
  }

  @Test
  void aWrongPropertyStopsStartUpNamingThePropertyAndTheFix() {
    runner
        .withPropertyValues("boxline.topics[acme/shop/orders].partitions=0")
        .run(
            ctx -> {
              assertThat(ctx).hasFailed();
              FailureAnalysis a = analysis(ctx.getStartupFailure());
              assertThat(a.getDescription())
                  .contains("boxline.topics[acme/shop/orders].partitions");
              assertThat(a.getAction()).contains("1 to 65536");
            });
    runner
        .withPropertyValues("boxline.topics[no-namespace].partitions=2")
        .run(
            ctx ->
                assertThat(analysis(ctx.getStartupFailure()).getDescription())
                    .contains("boxline.topics[no-namespace]"));
    runner
        .withPropertyValues("boxline.subscriptions.billing.topics=acme/shop/missing")
        .run(
            ctx -> {
              FailureAnalysis a = analysis(ctx.getStartupFailure());
              assertThat(a.getDescription()).contains("boxline.subscriptions[billing]", "missing");
            });
    runner
        .withPropertyValues("boxline.stop-timeout=0s")
        .run(
            ctx -> {
              FailureAnalysis a = analysis(ctx.getStartupFailure());
              assertThat(a.getDescription()).contains("boxline.stop-timeout");
              assertThat(a.getAction()).contains("a positive duration");
            });
    runner
        .withPropertyValues("boxline.schema=bad schema;")
        .run(
            ctx ->
                assertThat(analysis(ctx.getStartupFailure()).getDescription())
                    .contains("boxline.schema"));
  }

  @Test
  void boxlineCanBeSwitchedOff() {
    runner
        .withPropertyValues("boxline.enabled=false")
        .run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(Boxline.class));
  }

  @Test
  void healthIsUpWhileRunningDownWhenLaggingAndOutOfServiceOnceStopping() {
    runner
        .withPropertyValues(
            "boxline.topics[acme/shop/orders].partitions=1",
            "boxline.subscriptions.nobody-reads.topics=acme/shop/orders",
            "boxline.health.max-lag-age=50ms")
        .run(
            ctx -> {
              BoxlineHealth health = ctx.getBean(BoxlineHealth.class);
              assertThat(health.isRunning()).as("started with the context").isTrue();
              assertThat(health.check().status()).isEqualTo("UP");
              Boxline b = ctx.getBean(Boxline.class);
              b.inTransaction(
                  tx ->
                      b.publisher()
                          .publish(
                              tx,
                              io.boxline.OutgoingEvent.builder(TopicName.parse("acme/shop/orders"))
                                  .type("t")
                                  .payload(new byte[] {'{', '}'})
                                  .contentType("application/json")
                                  .build()));
              Await.until(
                  Duration.ofSeconds(30),
                  "health DOWN for the lag",
                  () -> health.check().status().equals("DOWN"));
              assertThat(health.check().details().get("lagging").toString())
                  .contains("nobody-reads");
              health.stop();
              assertThat(health.check().status()).isEqualTo("OUT_OF_SERVICE");
            });
  }
}
