/**
 * Support for an application's own tests: a Boxline on an in-memory store, what was published, and
 * waiting for handlers without sleeping. Supported API (unlike {@code io.boxline.internal}).
 */
package io.boxline.testing;
