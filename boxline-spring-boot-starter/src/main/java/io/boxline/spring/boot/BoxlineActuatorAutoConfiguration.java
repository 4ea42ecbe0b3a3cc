package io.boxline.spring.boot;

import io.boxline.Boxline;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The actuator side, when the actuator is present: the {@code boxline} endpoint and, on Boot 3
 * (where {@code HealthIndicator} lives in {@code org.springframework.boot.actuate.health}), the
 * {@code boxline} health indicator.
 */
@AutoConfiguration(after = BoxlineAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.endpoint.annotation.Endpoint")
@ConditionalOnBean(Boxline.class)
public class BoxlineActuatorAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  public BoxlineEndpoint boxlineEndpoint(Boxline boxline, BoxlineProperties properties) {
    return new BoxlineEndpoint(boxline, properties.getEndpoint().isWriteEnabled());
  }

  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(name = "org.springframework.boot.actuate.health.AbstractHealthIndicator")
  static class Boot3Health {
    @Bean(name = "boxlineHealthIndicator")
    @ConditionalOnMissingBean(name = "boxlineHealthIndicator")
    AbstractHealthIndicator boxlineHealthIndicator(BoxlineHealth health) {
      return new AbstractHealthIndicator("Boxline health check failed") {
        @Override
        protected void doHealthCheck(Health.Builder builder) {
          BoxlineHealth.Report r = health.check();
          builder.status(new Status(r.status())).withDetails(r.details());
        }
      };
    }
  }
}
