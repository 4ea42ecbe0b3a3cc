package io.boxline;

import java.time.Duration;

/**
 * A handler ran past its consumer's {@link ConsumerBuilder#handlerTimeout handler timeout} and was
 * interrupted. The attempt counts as failed under the retry policy, like any other failure.
 */
public class HandlerTimeoutException extends BoxlineException {
  public HandlerTimeoutException(String consumer, Duration timeout, Throwable cause) {
    super(
        "the handler of consumer "
            + consumer
            + " ran past its timeout of "
            + timeout
            + " and was interrupted",
        cause);
  }
}
