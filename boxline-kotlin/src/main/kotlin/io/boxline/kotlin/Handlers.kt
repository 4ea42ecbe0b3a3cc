package io.boxline.kotlin

import io.boxline.ConsumerBuilder
import io.boxline.Event
import io.boxline.EventTypes
import io.boxline.TypedHandlers
import java.lang.reflect.UndeclaredThrowableException
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlinx.coroutines.runBlocking

/**
 * `on(T::class.java, handler)`: handles events registered for `T`, decoded with their codec. A
 * checked exception [handler] throws fails the event like an unchecked one (see [unchecked]).
 */
public inline fun <reified T : Any> TypedHandlers.Builder.on(
    noinline handler: (T) -> Unit
): TypedHandlers.Builder = on(T::class.java) { value -> unchecked { handler(value) } }

/**
 * [TypedHandlers] for [types], configured by [block]:
 * `typedHandlers(types) { on<OrderPlaced> { … }; on<OrderShipped> { … } }`. Events of a type
 * without a handler are dead-lettered unless `otherwise` handles them, as in Java.
 */
public fun typedHandlers(
    types: EventTypes,
    block: TypedHandlers.Builder.() -> Unit,
): TypedHandlers = TypedHandlers.builder(types).apply(block).build()

/**
 * Sets a handler for events of one Java type, `T`, decoded with the codec its registration in
 * [types] names. It is [TypedHandlers] with one `on<T>`: an event of any other type is
 * dead-lettered.
 */
public inline fun <reified T : Any> ConsumerBuilder.handler(
    types: EventTypes,
    noinline handler: (T) -> Unit,
): ConsumerBuilder = this.handler(typedHandlers(types) { on<T>(handler) })

/**
 * Sets a handler that suspends. Each call runs [handler] in `runBlocking(context)` on the thread
 * the consumer gives the event to, which waits for it: the event counts as handled when [handler]
 * returns, and what it throws goes to the retry policy, exactly as for `handler(EventHandler)`. An
 * interrupt of that thread (`handlerTimeout`, `close()` after its graceful time) cancels the
 * coroutine.
 */
public fun ConsumerBuilder.suspendHandler(
    context: CoroutineContext = EmptyCoroutineContext,
    handler: suspend (Event) -> Unit,
): ConsumerBuilder = this.handler { event -> unchecked { runBlocking(context) { handler(event) } } }

/** [suspendHandler] for events of one Java type, `T`, decoded as [handler] (with [types]) does. */
public inline fun <reified T : Any> ConsumerBuilder.suspendHandler(
    types: EventTypes,
    context: CoroutineContext = EmptyCoroutineContext,
    noinline handler: suspend (T) -> Unit,
): ConsumerBuilder = this.handler<T>(types) { value -> runBlocking(context) { handler(value) } }

/**
 * Runs [block], turning a checked exception into an unchecked one. Kotlin code can throw checked
 * exceptions, and the consumer treats only unchecked ones as a failed attempt; an interrupt is
 * restored, so the consumer still sees it.
 */
@PublishedApi
internal inline fun unchecked(block: () -> Unit) {
    try {
        block()
    } catch (e: InterruptedException) {
        Thread.currentThread().interrupt()
        throw IllegalStateException("the handler was interrupted", e)
    } catch (e: RuntimeException) {
        throw e
    } catch (e: Error) {
        throw e
    } catch (e: Throwable) {
        throw UndeclaredThrowableException(e, "the handler threw $e")
    }
}
