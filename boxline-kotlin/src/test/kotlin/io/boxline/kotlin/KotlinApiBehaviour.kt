package io.boxline.kotlin

import io.boxline.Boxline
import io.boxline.Event
import io.boxline.EventQuery
import io.boxline.EventTypes
import io.boxline.NamespacePath
import io.boxline.OutgoingEvent
import io.boxline.RetryPolicy
import io.boxline.SubscriptionSpec
import io.boxline.TopicName
import io.boxline.testkit.Await
import io.boxline.testkit.TestDatabase
import java.io.IOException
import java.time.Duration
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.CountDownLatch
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Test

/** A record, so that Jackson decodes it without the Kotlin module. */
@JvmRecord data class OrderPlaced(val orderId: String, val customerId: String)

/**
 * The Kotlin extensions against a real database: each test has a schema of its own (the testkit's
 * [TestDatabase]), dropped afterwards. Subclasses choose the database.
 */
abstract class KotlinApiBehaviour {
    private val wait: Duration = Duration.ofSeconds(20)
    private val databases = mutableListOf<TestDatabase>()

    abstract fun database(hint: String): TestDatabase

    @AfterEach
    fun dropSchemas() {
        databases.forEach { it.close() }
    }

    /** A started Boxline with a topic of [partitions] partitions and a subscription "sub" of it. */
    private fun boxline(hint: String, partitions: Int): Pair<Boxline, EventTypes> {
        val db = database(hint).also { databases += it }
        val topic = TopicName.of("acme/kt", "orders")
        val types = eventTypes(
            eventType<OrderPlaced>("order.placed", "acme/kt/orders").key { it.customerId },
        )
        val boxline = db.boxline(types)
        boxline.admin().createNamespace(NamespacePath.of("acme/kt"))
        boxline.admin().createTopic(topic, partitions)
        boxline.admin().createSubscription(SubscriptionSpec.of("sub", topic))
        return boxline to types
    }

    private fun Boxline.cursorPositions(): Long = admin().lag("sub").sumOf { it.position() }

    private fun Boxline.newestSequences(): Long = admin().lag("sub").sumOf { it.lastSequence() }

    @Test
    fun suspendPublishReachesTheTypedHandlerInKeyOrder() {
        val (boxline, types) = boxline("ktpublish", 4)
        runBlocking {
            repeat(20) { boxline.publish(OrderPlaced("o$it", "c${it % 3}")) }
            val results =
                boxline.publishAll((20 until 30).map { OrderPlaced("o$it", "c${it % 3}") })
            assertThat(results).hasSize(10).noneMatch { it.duplicate() }
        }
        val received = CopyOnWriteArrayList<OrderPlaced>()
        val consumer =
            boxline.consumer("sub").handler<OrderPlaced>(types) { received += it }.start()
        consumer.use {
            Await.until(wait, "30 events handled") { it.handledCount() == 30L }
        }
        assertThat(received.map { it.orderId })
            .containsExactlyInAnyOrderElementsOf((0 until 30).map { "o$it" })
        received.groupBy { it.customerId }.values.forEach { ofOneKey ->
            val numbers = ofOneKey.map { it.orderId.drop(1).toInt() }
            assertThat(numbers).isSorted()
        }
    }

    @Test
    fun transactionCommitsRowsAndEventsTogetherOrNeither() {
        val (boxline, _) = boxline("kttx", 1)
        val db = databases.last()
        db.dataSource().connection.use { c ->
            c.createStatement().use {
                it.execute("CREATE TABLE ${db.table("shop_orders")} (id VARCHAR(20) PRIMARY KEY)")
            }
        }
        fun insert(tx: java.sql.Connection, id: String) =
            tx.prepareStatement("INSERT INTO ${db.table("shop_orders")} (id) VALUES (?)").use {
                it.setString(1, id)
                it.executeUpdate()
            }
        runBlocking {
            val result = boxline.transaction { tx ->
                insert(tx, "o1")
                boxline.publisher().publish(tx, OrderPlaced("o1", "c1"))
            }
            assertThat(result.partition()).isZero()
            val failure = runCatching {
                boxline.transaction { tx ->
                    insert(tx, "o2")
                    boxline.publisher().publish(tx, OrderPlaced("o2", "c1"))
                    throw IllegalStateException("rolled back")
                }
            }
            assertThat(failure.exceptionOrNull()).isInstanceOf(IllegalStateException::class.java)
                .hasMessage("rolled back")
        }
        val rows = db.dataSource().connection.use { c ->
            c.createStatement().use { st ->
                st.executeQuery("SELECT id FROM ${db.table("shop_orders")}").use { rs ->
                    generateSequence { if (rs.next()) rs.getString(1) else null }.toList()
                }
            }
        }
        assertThat(rows).containsExactly("o1")
        // Gap-free numbering: one committed event is sequence 1; the rolled-back one never existed.
        Await.until(wait, "the committed event sequenced") { boxline.newestSequences() == 1L }
        assertThat(boxline.admin().events(EventQuery.of(TopicName.of("acme/kt", "orders"), 0))
            .map { it.payloadAs<OrderPlaced>().orderId }).containsExactly("o1")
    }

    @Test
    fun suspendHandlerCountsAnEventHandledWhenTheCoroutineEndsAndRetriesWhatItThrows() {
        val (boxline, types) = boxline("ktsuspend", 2)
        runBlocking { boxline.publishAll((1..6).map { OrderPlaced("o$it", "c$it") }) }
        val attempts = ConcurrentHashMap<String, AtomicInteger>()
        val done = CopyOnWriteArrayList<String>()
        val consumer = boxline.consumer("sub")
            .retryPolicy(RetryPolicy.exponential(Duration.ofMillis(5), Duration.ofMillis(20)))
            .suspendHandler<OrderPlaced>(types) { order ->
                val attempt =
                    attempts.computeIfAbsent(order.orderId) { AtomicInteger() }.incrementAndGet()
                withContext(Dispatchers.Default) { delay(1) } // suspends off the handler's thread
                // A checked exception, which the Java consumer would not catch unwrapped.
                if (order.orderId == "o3" && attempt == 1) throw IOException("first attempt fails")
                done += order.orderId
            }
            .start()
        consumer.use {
            Await.until(wait, "6 events handled") { it.handledCount() == 6L }
        }
        assertThat(done).containsExactlyInAnyOrder("o1", "o2", "o3", "o4", "o5", "o6")
        assertThat(attempts.getValue("o3").get()).isEqualTo(2)
        assertThat(attempts.filterKeys { it != "o3" }.values.map { it.get() }).containsOnly(1)
        assertThat(boxline.admin().failures("sub").deadLetters()).isZero()
        Await.until(wait, "every cursor past its events") { boxline.cursorPositions() == 6L }
    }

    @Test
    fun anInterruptCancelsTheSuspendHandlersCoroutine() {
        val (boxline, _) = boxline("ktinterrupt", 1)
        runBlocking { boxline.publish(OrderPlaced("o1", "c")) }
        val attempts = AtomicInteger()
        val cancelled = CountDownLatch(1)
        val decoded = CopyOnWriteArrayList<OrderPlaced>()
        val consumer = boxline.consumer("sub")
            .handlerTimeout(Duration.ofMillis(200))
            .retryPolicy(RetryPolicy.exponential(Duration.ofMillis(5), Duration.ofMillis(20)))
            .suspendHandler { event ->
                if (attempts.incrementAndGet() == 1) {
                    try {
                        awaitCancellation() // until handlerTimeout interrupts the thread
                    } catch (e: CancellationException) {
                        cancelled.countDown()
                        throw e
                    }
                }
                decoded += event.payloadAs<OrderPlaced>()
            }
            .start()
        consumer.use {
            Await.until(wait, "the event handled") { it.handledCount() == 1L }
        }
        assertThat(cancelled.count).isZero()
        assertThat(attempts.get()).isEqualTo(2)
        assertThat(decoded).containsExactly(OrderPlaced("o1", "c"))
    }

    @Test
    fun typedHandlersRouteEachTypeAndLeaveUnknownOnesToOtherwise() {
        val (boxline, types) = boxline("ktrouting", 1)
        runBlocking {
            boxline.publish(OrderPlaced("o1", "c"))
            boxline.publish(
                OutgoingEvent.builder(TopicName.of("acme/kt", "orders"))
                    .type("order.audited")
                    .payload("{}".toByteArray())
                    .build()
            )
        }
        val orders = CopyOnWriteArrayList<String>()
        val others = CopyOnWriteArrayList<String>()
        val consumer = boxline.consumer("sub")
            .handler(typedHandlers(types) {
                on<OrderPlaced> { orders += it.orderId }
                otherwise { others += it.type() }
            })
            .start()
        consumer.use {
            Await.until(wait, "both events handled") { it.handledCount() == 2L }
        }
        assertThat(orders).containsExactly("o1")
        assertThat(others).containsExactly("order.audited")
    }

    @Test
    fun flowKeepsEachPartitionInOrder() {
        val (boxline, _) = boxline("ktfloworder", 4)
        runBlocking { boxline.publishAll((0 until 40).map { OrderPlaced("o$it", "c${it % 8}") }) }
        val events = runBlocking {
            withTimeout(wait.toMillis()) {
                boxline.consumeAsFlow("sub") { concurrency(4).batchSize(5) }.take(40).toList()
            }
        }
        assertThat(events.map { it.id() }).doesNotHaveDuplicates().hasSize(40)
        events.groupBy { it.partition() }.values.forEach { ofOnePartition ->
            assertThat(ofOnePartition.map { it.sequence() }).isSorted().doesNotHaveDuplicates()
        }
        assertThat(events.groupBy { it.partition() }).hasSizeGreaterThan(1)
    }

    @Test
    fun flowAcknowledgesAnEventOnlyOnceTheCollectorHandledIt() {
        val (boxline, _) = boxline("ktflowack", 1)
        runBlocking { boxline.publishAll((1..5).map { OrderPlaced("o$it", "c") }) }
        Await.until(wait, "5 events sequenced") { boxline.newestSequences() == 5L }
        val handled = mutableListOf<Long>()
        assertThatThrownBy {
            runBlocking {
                withTimeout(wait.toMillis()) {
                    boxline.consumeAsFlow("sub") { batchSize(1) }.collect { event ->
                        check(event.sequence() != 3L) { "collector failed on 3" }
                        handled += event.sequence()
                    }
                }
            }
        }.hasMessage("collector failed on 3")
        assertThat(handled).containsExactly(1L, 2L)
        // 1 and 2 were acknowledged, 3 was not; its failure is the flow's, not a counted attempt.
        assertThat(boxline.cursorPositions()).isEqualTo(2L)
        assertThat(boxline.admin().failures("sub").retrying()).isZero()
        assertThat(boxline.admin().group("sub").members()).isEmpty()

        // take(3) ends the collection from inside the third emit: that event is not acknowledged.
        val again = runBlocking {
            withTimeout(wait.toMillis()) {
                boxline.consumeAsFlow("sub") { batchSize(1) }.take(3).toList()
            }
        }
        assertThat(again.map { it.sequence() }).containsExactly(3L, 4L, 5L)
        assertThat(boxline.cursorPositions()).isEqualTo(4L)
    }

    @Test
    fun cancellingTheCollectionStopsTheConsumerWithoutAcknowledgingTheEventInFlight() {
        val (boxline, _) = boxline("ktflowcancel", 1)
        runBlocking { boxline.publish(OrderPlaced("o1", "c")) }
        val first = Channel<Event>(1)
        runBlocking {
            withTimeout(wait.toMillis()) {
                val collecting = launch {
                    boxline.consumeAsFlow("sub").collect { event ->
                        first.send(event)
                        awaitCancellation() // the collector never finishes this event
                    }
                }
                val event = first.receive()
                assertThat(event.sequence()).isEqualTo(1L)
                collecting.cancelAndJoin()
            }
        }
        assertThat(boxline.cursorPositions()).isZero()
        assertThat(boxline.admin().group("sub").members()).isEmpty()
        assertThat(boxline.admin().failures("sub").retrying()).isZero()
        val redelivered = runBlocking {
            withTimeout(wait.toMillis()) { boxline.consumeAsFlow("sub").take(1).toList() }
        }
        assertThat(redelivered.single().payloadAs<OrderPlaced>()).isEqualTo(OrderPlaced("o1", "c"))
    }
}
