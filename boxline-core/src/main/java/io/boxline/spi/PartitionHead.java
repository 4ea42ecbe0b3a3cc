package io.boxline.spi;

/** The newest sequence of one partition, as announced by the sequencer. */
public record PartitionHead(long topicId, int partition, long lastSequence) {}
