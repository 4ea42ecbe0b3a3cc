package io.boxline.kotlin

import io.boxline.Boxline
import io.boxline.Consumer
import io.boxline.ConsumerBuilder
import io.boxline.Event
import java.time.Duration
import java.util.concurrent.CompletableFuture
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.channels.ClosedSendChannelException
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.FlowCollector
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext

/**
 * The events of [subscription] as a cold [Flow]. Each collection starts a [Consumer] of its own (a
 * member of the subscription's consumer group, configured by [configure], which sets anything but
 * the handler) and stops it when the collection ends.
 *
 * The consumer's handler hands each event to the collector and waits: an event is acknowledged
 * (counts as handled, and the cursor may move past it) only once `emit` has returned, that is once
 * the collector has handled it. So a partition's events reach the collector in order, one after the
 * other, while events of different partitions interleave. Operators that buffer between this flow
 * and the collector (`buffer`, `conflate`, `flowOn`, `collectLatest`, `produceIn`, `shareIn` …)
 * return from `emit` before the collector has handled the event, and so acknowledge it earlier.
 *
 * When the collection ends — cancelled, the collector threw, or an operator such as `take` or
 * `first` had enough — the event in flight is not acknowledged, and neither is the rest of its
 * batch: the consumer abandons its in-flight batches, whose events come again (at most
 * `concurrency × batchSize`, as after a crash), and records no attempt for them, so nothing is
 * parked or dead-lettered (a parked event this consumer was retrying is the exception: that attempt
 * counts). The retry policy does not apply to what the collector throws; that exception ends the
 * flow. Not for a flow's consumer: `handlerTimeout` (waiting for the collector would count),
 * `handleOnCommittingThread` (the publisher would wait for the collector).
 */
public fun Boxline.consumeAsFlow(
    subscription: String,
    configure: ConsumerBuilder.() -> Unit = {},
): Flow<Event> = flow {
    val pipe = EventPipe()
    var running: Consumer? = null
    try {
        withContext(Dispatchers.IO) {
            // Assigned inside: if the collection is cancelled while start() blocks, the finally
            // block still finds the started consumer and stops it.
            running = consumer(subscription).apply(configure).handler(pipe::handOver).start()
        }
        pipe.drainTo(this)
    } finally {
        pipe.close()
        try {
            running?.let { consumer ->
                withContext(NonCancellable + Dispatchers.IO) { consumer.stop(STOP_GRACE) }
            }
        } finally {
            // Only after the stop: a handler that gave up earlier would count as a failed attempt.
            pipe.release()
        }
    }
}

/**
 * How long the consumer lets in-flight batches finish when a collection ends. Handlers waiting for
 * the collector never finish, so this is only for cursor commits already under way on other
 * partitions; then the consumer abandons the batches and interrupts their handlers.
 */
private val STOP_GRACE: Duration = Duration.ofMillis(200)

/** An event waiting for the collector, and whether the collector has handled it. */
private class Handoff(val event: Event) {
    val handled = CompletableFuture<Unit>()
}

/** Passes events from the consumer's threads to the collector one at a time, and the acks back. */
private class EventPipe {
    /** Rendezvous: a handler waits until the collector takes its event. */
    private val handoffs = Channel<Handoff>()

    /** Completed once the consumer has stopped: a handler still waiting then gives up. */
    private val released = CompletableFuture<Unit>()

    /**
     * The consumer's handler, on one of its threads: returns once the collector has handled
     * [event]; throws when the collection ended first (by then the consumer is stopping, and the
     * event's batch is abandoned rather than counted as failed).
     */
    fun handOver(event: Event) = unchecked {
        val handoff = Handoff(event)
        val taken =
            try {
                runBlocking { handoffs.send(handoff) }
                true
            } catch (closed: ClosedSendChannelException) {
                false
            }
        // Waiting for the stop (rather than failing at once) keeps this out of the retry policy:
        // the stop abandons the batch and interrupts this thread.
        if (taken) CompletableFuture.anyOf(handoff.handled, released).get() else released.get()
        if (!handoff.handled.isDone) {
            throw IllegalStateException(
                "the flow's collection ended before the collector handled $event; it comes again"
            )
        }
    }

    suspend fun drainTo(collector: FlowCollector<Event>) {
        for (handoff in handoffs) {
            collector.emit(handoff.event)
            handoff.handled.complete(Unit)
        }
    }

    /** The collection ended: handlers that have not handed their event over stop trying. */
    fun close() {
        handoffs.close()
    }

    fun release() {
        released.complete(Unit)
    }
}
