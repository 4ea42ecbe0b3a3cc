package io.boxline.sample;

import io.boxline.sample.OrderService.EmailConfirmation;
import io.boxline.spring.BoxlineTask;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/** Sends the {@code email-confirmation} tasks (here: logs them and keeps what it sent). */
@Component
public class ConfirmationEmails {
  private static final Logger log = LoggerFactory.getLogger(ConfirmationEmails.class);
  private final List<EmailConfirmation> sent = new CopyOnWriteArrayList<>();

  @BoxlineTask("email-confirmation")
  public void send(EmailConfirmation email) {
    log.info("to {}: your order {} is confirmed", email.customer(), email.orderId());
    sent.add(email);
  }

  public List<EmailConfirmation> sent() {
    return List.copyOf(sent);
  }
}
