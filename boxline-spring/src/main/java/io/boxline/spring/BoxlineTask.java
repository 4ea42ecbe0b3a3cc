package io.boxline.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a bean method the handler of a task type: {@code (Payload)} or {@code (Payload,
 * TaskContext)}. The methods of a context share one task worker, started with the context; schedule
 * tasks with {@link BoxlineOutbox#schedule}.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface BoxlineTask {
  /** The task type. */
  String value();
}
