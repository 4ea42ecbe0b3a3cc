package io.boxline.bench;

/**
 * What the workloads of one invocation share: the parsed options, the database, and the name the
 * run's schemas start with (all dropped at the end).
 */
record Run(Options o, Db db, String schema) {}
