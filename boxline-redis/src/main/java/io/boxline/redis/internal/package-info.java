/**
 * Implementation; not a supported API. Types here are public only so that Boxline's own modules can
 * reach them: they change without notice between versions. Use the interfaces and builders of the
 * parent package instead.
 */
package io.boxline.redis.internal;
