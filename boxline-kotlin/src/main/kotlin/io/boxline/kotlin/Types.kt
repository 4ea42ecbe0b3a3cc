package io.boxline.kotlin

import io.boxline.Event
import io.boxline.EventType
import io.boxline.EventTypes
import io.boxline.TopicName

/**
 * `EventType.of(T::class.java, type, topic)`: how `T` is published, e.g.
 * `eventType<OrderPlaced>("order.placed", orders).key { it.customerId }`.
 */
public inline fun <reified T : Any> eventType(type: String, topic: TopicName): EventType<T> =
    EventType.of(T::class.java, type, topic)

/** Like [eventType], with the topic written `namespace/topic`, e.g. `"acme/shop/orders"`. */
public inline fun <reified T : Any> eventType(type: String, topic: String): EventType<T> =
    EventType.of(T::class.java, type, TopicName.parse(topic))

/** An [EventTypes] of [types]; fails on duplicates as `EventTypes.Builder.register` does. */
public fun eventTypes(vararg types: EventType<*>): EventTypes {
    val builder = EventTypes.builder()
    types.forEach { builder.register(it) }
    return builder.build()
}

/**
 * `payloadAs(T::class.java)`: the payload decoded with the default JSON codec. For the codec an
 * event type registers, use `payloadAs(types)`.
 */
public inline fun <reified T : Any> Event.payloadAs(): T = payloadAs(T::class.java)
