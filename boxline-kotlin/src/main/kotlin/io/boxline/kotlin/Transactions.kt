package io.boxline.kotlin

import io.boxline.Boxline
import io.boxline.PublishOptions
import io.boxline.PublishResult
import java.sql.Connection
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext

/**
 * `inTransaction(work)` on [Dispatchers.IO]: runs [work] in a new transaction and commits it, or
 * rolls back and rethrows. [work] is not a suspend function: JDBC blocks, and the transaction
 * belongs to the thread that runs it.
 *
 * Cancelling the caller does not stop the transaction: it runs to its end, and when it commits its
 * events exist even though the caller sees a `CancellationException` instead of the result.
 */
public suspend fun <T> Boxline.transaction(work: (tx: Connection) -> T): T =
    withContext(Dispatchers.IO) { inTransaction { tx -> work(tx) } }

/** Publishes [event] (a registered type or an `OutgoingEvent`) in a transaction of its own. */
public suspend fun Boxline.publish(event: Any): PublishResult = transaction { tx ->
    publisher().publish(tx, event)
}

/** Publishes [event] with per-call [options] in a transaction of its own. */
public suspend fun Boxline.publish(event: Any, options: PublishOptions): PublishResult =
    transaction { tx -> publisher().publish(tx, event, options) }

/** Publishes [events] in one transaction and one round trip; results in the same order. */
public suspend fun Boxline.publishAll(events: List<Any>): List<PublishResult> = transaction { tx ->
    publisher().publishAll(tx, events)
}
