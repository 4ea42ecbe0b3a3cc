/**
 * An in-memory {@link io.boxline.spi.Store}, {@link InMemoryStore}, for unit tests of the engine
 * and for experiments in one JVM. It is not durable: everything it holds is lost with the JVM, and
 * it runs no SQL, so transactional handlers cannot write business rows through its connections. It
 * passes the store contract suite of {@code boxline-testkit}.
 */
package io.boxline.internal.memory;
