package io.boxline.spring.boot;

import io.boxline.Boxline;
import io.boxline.BoxlineObserver;
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.jdbc.JdbcStore;
import io.boxline.spring.ApplicationEventBridge;
import io.boxline.spring.BoxlineLifecycle;
import io.boxline.spring.BoxlineListenerRegistrar;
import io.boxline.spring.BoxlineOutbox;
import io.boxline.spring.ListenerDefaults;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * Boxline on the application's {@link DataSource}: a {@link Boxline} built by its bean method and
 * started by a {@link BoxlineLifecycle} once the context is refreshed (closed after the listeners
 * stopped and before the data source), the {@link BoxlineOutbox} for publishing in
 * {@code @Transactional} methods, {@code @BoxlineListener} / {@code @BoxlineTask} beans, the
 * namespaces, topics and subscriptions declared under {@code boxline.*}, and Micrometer metrics
 * when a {@code MeterRegistry} is present. Every bean backs off when the application defines its
 * own.
 *
 * <p>Ordered by name after the data source and transaction manager configurations of Boot 3 and
 * Boot 4 (whose packages differ), so one class serves both.
 */
@AutoConfiguration(
    afterName = {
      "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration",
      "org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration",
      "org.springframework.boot.autoconfigure.orm.jpa.HibernateJpaAutoConfiguration",
      "org.springframework.boot.autoconfigure.transaction.TransactionAutoConfiguration",
      "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
      "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
      "org.springframework.boot.hibernate.autoconfigure.HibernateJpaAutoConfiguration",
      "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
      "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
      "org.springframework.modulith.events.config.EventExternalizationAutoConfiguration"
    })
@ConditionalOnClass({Boxline.class, JdbcStore.class})
@ConditionalOnBean(DataSource.class)
@ConditionalOnProperty(prefix = "boxline", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(BoxlineProperties.class)
public class BoxlineAutoConfiguration {

  /** Every {@link EventType} bean of the context, registered together. */
  @Bean
  @ConditionalOnMissingBean
  public EventTypes boxlineEventTypes(ObjectProvider<EventType<?>> types) {
    EventTypes.Builder b = EventTypes.builder();
    types.orderedStream().forEach(b::register);
    return b.build();
  }

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public Boxline boxline(
      DataSource dataSource,
      BoxlineProperties properties,
      EventTypes eventTypes,
      ObjectProvider<BoxlineObserver> observers,
      ObjectProvider<BoxlineBuilderCustomizer> customizers) {
    return BoxlineStarter.build(dataSource, properties, eventTypes, observers, customizers);
  }

  /**
   * Starts Boxline once the context is refreshed (migrating the schema, then creating what {@code
   * boxline.*} declares), before the listeners and a web server start; closes it, within {@code
   * boxline.stop-timeout}, when the context closes, after the listeners stopped.
   */
  @Bean
  @ConditionalOnMissingBean
  public BoxlineLifecycle boxlineLifecycle(Boxline boxline, BoxlineProperties properties) {
    java.time.Duration stopTimeout = properties.getStopTimeout();
    if (stopTimeout == null || stopTimeout.isZero() || stopTimeout.isNegative()) {
      throw new InvalidBoxlinePropertyException(
          "boxline.stop-timeout",
          String.valueOf(stopTimeout),
          "a positive duration such as 30s",
          null);
    }
    return new BoxlineLifecycle(
        boxline, b -> BoxlineStarter.declare(b.admin(), properties), stopTimeout);
  }

  @Bean
  @ConditionalOnMissingBean
  public BoxlineOutbox boxlineOutbox(
      Boxline boxline,
      DataSource dataSource,
      ObjectProvider<PlatformTransactionManager> transactionManager) {
    return new BoxlineOutbox(boxline, dataSource, transactionManager.getIfUnique());
  }

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "boxline", name = "application-events", matchIfMissing = true)
  public ApplicationEventBridge boxlineApplicationEvents(BoxlineOutbox outbox, EventTypes types) {
    return new ApplicationEventBridge(outbox, types);
  }

  @Bean
  @ConditionalOnMissingBean
  public ListenerDefaults boxlineListenerDefaults(BoxlineProperties properties) {
    BoxlineProperties.Listener l = properties.getListener();
    return new ListenerDefaults(
        l.getBatchSize(),
        l.getConcurrency(),
        l.getShutdownTimeout(),
        l.getHandlerTimeout(),
        l.getMaxAttempts(),
        l.getTaskConcurrency());
  }

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnProperty(prefix = "boxline", name = "auto-start", matchIfMissing = true)
  public static BoxlineListenerRegistrar boxlineListenerRegistrar() {
    return new BoxlineListenerRegistrar();
  }

  /** Health as a plain object both Boot lines' indicators report. */
  @Bean
  @ConditionalOnMissingBean
  public BoxlineHealth boxlineHealth(Boxline boxline, BoxlineProperties properties) {
    return new BoxlineHealth(boxline, properties.getHealth().getMaxLagAge());
  }

  /**
   * Binds Boxline's meters to the application's MeterRegistry when there is one (looked up when
   * Boxline is built, so the registry's own configuration order does not matter).
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {
        "io.micrometer.core.instrument.MeterRegistry",
        "io.boxline.micrometer.BoxlineMetrics"
      })
  static class Metrics {
    @Bean
    BoxlineBuilderCustomizer boxlineMetrics(
        ObjectProvider<io.micrometer.core.instrument.MeterRegistry> registry) {
      return b -> {
        io.micrometer.core.instrument.MeterRegistry r = registry.getIfUnique();
        if (r != null) {
          b.observer(io.boxline.micrometer.BoxlineMetrics.builder(r).build());
        }
      };
    }
  }

  /**
   * Trace context into published events' headers and a consumer span around each listener call,
   * when boxline-opentelemetry is on the class path and the context has an {@code OpenTelemetry}.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = {"io.opentelemetry.api.OpenTelemetry", "io.boxline.opentelemetry.BoxlineTracing"})
  static class Tracing {
    /**
     * The application's {@code BoxlineTracing}, else one on its {@code OpenTelemetry}, else none;
     * looked up when Boxline and the listeners are built, so bean order does not matter.
     */
    static final class TracingLookup {
      private final ObjectProvider<io.boxline.opentelemetry.BoxlineTracing> own;
      private final ObjectProvider<io.opentelemetry.api.OpenTelemetry> openTelemetry;
      private io.boxline.opentelemetry.BoxlineTracing tracing;
      private boolean looked;

      TracingLookup(
          ObjectProvider<io.boxline.opentelemetry.BoxlineTracing> own,
          ObjectProvider<io.opentelemetry.api.OpenTelemetry> openTelemetry) {
        this.own = own;
        this.openTelemetry = openTelemetry;
      }

      synchronized io.boxline.opentelemetry.BoxlineTracing get() {
        if (!looked) {
          looked = true;
          tracing = own.getIfUnique();
          io.opentelemetry.api.OpenTelemetry otel = openTelemetry.getIfUnique();
          if (tracing == null && otel != null) {
            tracing = io.boxline.opentelemetry.BoxlineTracing.create(otel);
          }
        }
        return tracing;
      }
    }

    @Bean
    TracingLookup boxlineTracingLookup(
        ObjectProvider<io.boxline.opentelemetry.BoxlineTracing> own,
        ObjectProvider<io.opentelemetry.api.OpenTelemetry> openTelemetry) {
      return new TracingLookup(own, openTelemetry);
    }

    @Bean
    BoxlineBuilderCustomizer boxlineTracingInterceptor(TracingLookup tracing) {
      return b -> {
        io.boxline.opentelemetry.BoxlineTracing t = tracing.get();
        if (t != null) {
          b.publishInterceptor(t.publishInterceptor());
        }
      };
    }

    @Bean
    io.boxline.spring.ListenerDecorator boxlineTracingSpans(TracingLookup tracing) {
      return new io.boxline.spring.ListenerDecorator() {
        @Override
        public io.boxline.EventHandler handler(String sub, io.boxline.EventHandler h) {
          io.boxline.opentelemetry.BoxlineTracing t = tracing.get();
          return t == null ? h : t.handler(sub, h);
        }

        @Override
        public io.boxline.BatchHandler batchHandler(String sub, io.boxline.BatchHandler h) {
          io.boxline.opentelemetry.BoxlineTracing t = tracing.get();
          return t == null ? h : t.batchHandler(sub, h);
        }

        @Override
        public io.boxline.TransactionalHandler transactionalHandler(
            String sub, io.boxline.TransactionalHandler h) {
          io.boxline.opentelemetry.BoxlineTracing t = tracing.get();
          return t == null ? h : t.transactionalHandler(sub, h);
        }
      };
    }
  }

  /**
   * Boxline as the target of Spring Modulith's event externalization, when Modulith's events are on
   * the class path and the application declares what to externalize (an {@code
   * EventExternalizationConfiguration}, which Modulith's own auto-configuration also provides).
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(
      name = "org.springframework.modulith.events.support.DelegatingEventExternalizer")
  @ConditionalOnProperty(
      prefix = "boxline",
      name = "modulith-externalization",
      matchIfMissing = true)
  static class ModulithExternalization {
    @Bean
    @ConditionalOnBean(
        type = "org.springframework.modulith.events.EventExternalizationConfiguration")
    @ConditionalOnMissingBean(
        type = "org.springframework.modulith.events.support.EventExternalizationSupport")
    org.springframework.modulith.events.support.DelegatingEventExternalizer
        boxlineModulithExternalizer(
            org.springframework.modulith.events.EventExternalizationConfiguration configuration,
            BoxlineOutbox outbox,
            EventTypes types) {
      return io.boxline.spring.ModulithExternalizer.create(configuration, outbox, types);
    }
  }
}
