package io.boxline.jdbc.internal;

/** The key of a log row, as retention picks and deletes them ({@code purge_log_*}). */
record LogKey(long topicId, int partition, long sequence) {}
