package io.boxline.demo;

/**
 * The demo's business event. Records work with Boxline's default Jackson codec as they are.
 *
 * @param orderId the business row's primary key
 * @param customerId the ordering key: all of a customer's orders land on one partition, in order
 * @param customerSeq 1, 2, 3, ... per customer, counting committed orders only; consumers check
 *     that they see exactly this sequence
 * @param amountCents order total
 */
public record OrderPlaced(String orderId, String customerId, long customerSeq, long amountCents) {}
