package io.boxline.internal;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.ConsumerBuilder;
import io.boxline.DeadLetter;
import io.boxline.DeadLetterQuery;
import io.boxline.HandlerDecision;
import io.boxline.OutgoingEvent;
import io.boxline.PayloadCodec;
import io.boxline.PublishResult;
import io.boxline.RetryPolicy;
import io.boxline.SubscriptionSpec;
import io.boxline.TaskHandler;
import io.boxline.TaskOptions;
import io.boxline.Tasks;
import io.boxline.TopicName;
import io.boxline.ValidationException;
import java.sql.Connection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.function.BiConsumer;

/** Tasks over the log: a topic, a subscription, typed dispatch, blocking dead letters. */
final class DefaultTasks implements Tasks {
  private static final TopicName TOPIC_NAME = TopicName.parse(TOPIC);

  private final Boxline boxline;
  private volatile boolean ready;

  DefaultTasks(Boxline boxline) {
    this.boxline = boxline;
  }

  /** Creates the task topic and subscription once (idempotent, so several instances may race). */
  private void ensure() {
    if (!ready) {
      synchronized (this) {
        if (!ready) {
          boxline.admin().createNamespace(TOPIC_NAME.namespace());
          boxline.admin().createTopic(TOPIC_NAME, PARTITIONS);
          boxline.admin().createSubscription(SubscriptionSpec.of(SUBSCRIPTION, TOPIC_NAME));
          ready = true;
        }
      }
    }
  }

  @Override
  public PublishResult schedule(
      Connection tx, String taskType, Object payload, TaskOptions options) {
    if (taskType == null || taskType.isBlank()) {
      throw new ValidationException("taskType must not be blank");
    }
    Objects.requireNonNull(options, "options");
    ensure();
    PayloadCodec json = PayloadCodec.json();
    return boxline
        .publisher()
        .publish(
            tx,
            OutgoingEvent.builder(TOPIC_NAME)
                .type(taskType)
                .key(options.orderingKey())
                .contentType(json.contentType())
                .payload(json.encode(payload))
                .idempotencyKey(options.idempotencyKey())
                .deliverAt(options.runAt())
                .build());
  }

  @Override
  public Worker worker() {
    ensure();
    return new WorkerBuilder();
  }

  @Override
  public List<DeadLetter> blocked() {
    ensure();
    return boxline.deadLetters().list(DeadLetterQuery.of(SUBSCRIPTION));
  }

  @Override
  public boolean unblock(UUID taskId) {
    ensure();
    return boxline.deadLetters().redrive(DeadLetterQuery.of(SUBSCRIPTION).eventId(taskId)) > 0;
  }

  private final class WorkerBuilder implements Worker {
    private final Map<String, BiConsumer<byte[], io.boxline.Event>> handlers = new HashMap<>();
    private final ConsumerBuilder consumer =
        boxline.consumer(SUBSCRIPTION).deadLetterBlocksKey(true).retryPolicy(RetryPolicy.DEFAULT);

    @Override
    public <T> Worker handle(
        String taskType, Class<T> payloadType, TaskHandler<? super T> handler) {
      Objects.requireNonNull(payloadType, "payloadType");
      Objects.requireNonNull(handler, "handler");
      if (handlers.putIfAbsent(
              taskType,
              (bytes, task) -> handler.run(PayloadCodec.json().decode(bytes, payloadType), task))
          != null) {
        throw new ValidationException("a handler for task type '" + taskType + "' is already set");
      }
      return this;
    }

    @Override
    public Worker retryPolicy(RetryPolicy policy) {
      consumer.retryPolicy(policy);
      return this;
    }

    @Override
    public Worker concurrency(int threads) {
      consumer.concurrency(threads);
      return this;
    }

    @Override
    public Worker id(String id) {
      consumer.id(id);
      return this;
    }

    @Override
    public Consumer start() {
      Map<String, BiConsumer<byte[], io.boxline.Event>> byType = Map.copyOf(handlers);
      return consumer
          .handler(
              task -> {
                BiConsumer<byte[], io.boxline.Event> h = byType.get(task.type());
                if (h == null) {
                  throw HandlerDecision.deadLetter(
                      "no handler for task type '" + task.type() + "' in this worker");
                }
                h.accept(task.payload(), task);
              })
          .start();
    }
  }
}
