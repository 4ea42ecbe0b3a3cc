package io.boxline.spi;

/** A subscription's cursor on one partition, as claimed by a consumer. */
public record CursorState(
    long topicId, int partition, long position, long epoch, long lastSequence) {}
