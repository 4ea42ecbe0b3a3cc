package io.boxline.spring.boot;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/** The {@code boxline} health indicator on Boot 3 ({@code org.springframework.boot.actuate.health}). */
@AutoConfiguration(after = BoxlineAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.actuate.health.AbstractHealthIndicator")
@ConditionalOnBean(BoxlineHealth.class)
public class BoxlineHealthAutoConfiguration {
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
