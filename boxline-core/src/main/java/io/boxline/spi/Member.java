package io.boxline.spi;

/** A live member of a consumer group. */
public record Member(String id, double weight) {}
