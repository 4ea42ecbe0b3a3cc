package io.boxline.bench;

/**
 * What the workloads of one invocation share: the parsed options, the database (for group and
 * failure workloads the server's maintenance database, each workload making a database of its own),
 * and the prefix of the schemas the run works in, dropped at the end (null when it has none).
 */
record Run(Options o, Db db, String schema) {}
