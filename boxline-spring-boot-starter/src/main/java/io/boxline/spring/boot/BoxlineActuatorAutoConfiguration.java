package io.boxline.spring.boot;

import io.boxline.Boxline;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code boxline} actuator endpoint, when the actuator is present (its annotations are the same
 * on Boot 3 and 4). The health indicator comes from {@link BoxlineHealthAutoConfiguration}, one per
 * Boot line, because {@code HealthIndicator} moved between them.
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
}
