package io.boxline.internal;

import io.boxline.BatchHandler;
import io.boxline.ConsumerHooks;
import io.boxline.Event;
import io.boxline.EventHandler;
import io.boxline.PartitionListener;
import io.boxline.RetryPolicy;
import io.boxline.TransactionalHandler;
import java.time.Duration;
import java.util.Map;

/**
 * Settings of one consumer, validated by its builder; shared by the consumer's parts.
 *
 * @param hooks the application's hooks with the observers behind them
 */
record ConsumerSettings(
    String id,
    double weight,
    EventHandler handler,
    BatchHandler batchHandler,
    TransactionalHandler txHandler,
    io.boxline.TransactionRunner txRunner,
    PartitionListener listener,
    int batchSize,
    int concurrency,
    Duration shutdownTimeout,
    RetryPolicy retryPolicy,
    Map<String, RetryPolicy> typePolicies,
    boolean deadLetterBlocksKey,
    ConsumerHooks hooks,
    java.util.function.Function<Event, String> inboxKey,
    boolean onCommittingThread,
    Observers observers,
    java.time.Clock clock,
    Duration handlerTimeout,
    int keyConcurrency,
    Duration hardShutdownTimeout,
    java.util.concurrent.Executor executor) {}
