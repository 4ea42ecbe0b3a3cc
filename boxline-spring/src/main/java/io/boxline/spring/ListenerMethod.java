package io.boxline.spring;

import io.boxline.Event;
import io.boxline.EventType;
import io.boxline.EventTypes;
import io.boxline.PayloadCodec;
import io.boxline.TaskContext;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import org.springframework.core.ResolvableType;

/**
 * One annotated bean method and how its parameters are filled: the event, its decoded payload, a
 * batch of either, the listener's transaction, a task's context. Checked once, when the context
 * starts, so a wrong signature fails start-up with the method's name.
 */
final class ListenerMethod {
  enum Kind {
    EVENT,
    PAYLOAD,
    PAYLOAD_AND_EVENT,
    BATCH_OF_EVENTS,
    BATCH_OF_PAYLOADS
  }

  final Object bean;
  final Method method;
  final Kind kind;
  final boolean takesConnection;
  final boolean takesTaskContext;
  private final Class<?> payloadType;
  private final PayloadCodec codec;

  private ListenerMethod(
      Object bean,
      Method method,
      Kind kind,
      Class<?> payloadType,
      PayloadCodec codec,
      boolean takesConnection,
      boolean takesTaskContext) {
    this.bean = bean;
    this.method = method;
    this.kind = kind;
    this.payloadType = payloadType;
    this.codec = codec;
    this.takesConnection = takesConnection;
    this.takesTaskContext = takesTaskContext;
    method.setAccessible(true);
  }

  String name() {
    return method.getDeclaringClass().getName() + "." + method.getName();
  }

  static ListenerMethod listener(Object bean, Method m, EventTypes types, boolean transactional) {
    Class<?>[] p = m.getParameterTypes();
    int n = p.length;
    boolean connection = n > 0 && p[n - 1] == Connection.class;
    if (connection) {
      n--;
      if (!transactional) {
        throw invalid(
            m,
            "takes a java.sql.Connection, which only a transactional listener gets; set"
                + " transactional = true or remove the parameter");
      }
    }
    if (n == 1 && p[0] == Event.class) {
      return new ListenerMethod(bean, m, Kind.EVENT, null, null, connection, false);
    }
    if (n == 1 && List.class.isAssignableFrom(p[0])) {
      if (transactional || connection) {
        throw invalid(
            m,
            "takes a batch, but a transactional listener handles one event per call (its batch"
                + " still commits in one transaction); take one event or payload");
      }
      Class<?> element = ResolvableType.forMethodParameter(m, 0).getGeneric(0).resolve();
      if (element == null) {
        throw invalid(m, "takes a List without its element type; write List<Event> or List<T>");
      }
      if (element == Event.class) {
        return new ListenerMethod(bean, m, Kind.BATCH_OF_EVENTS, null, null, false, false);
      }
      return new ListenerMethod(
          bean, m, Kind.BATCH_OF_PAYLOADS, element, codecFor(element, types), false, false);
    }
    if (n == 1) {
      return new ListenerMethod(
          bean, m, Kind.PAYLOAD, p[0], codecFor(p[0], types), connection, false);
    }
    if (n == 2 && p[1] == Event.class && p[0] != Event.class) {
      return new ListenerMethod(
          bean, m, Kind.PAYLOAD_AND_EVENT, p[0], codecFor(p[0], types), connection, false);
    }
    throw invalid(
        m,
        "has parameters Boxline cannot fill; take (Event), (Payload), (Payload, Event),"
            + " (List<Event>) or (List<Payload>), plus a trailing java.sql.Connection when"
            + " transactional");
  }

  static ListenerMethod task(Object bean, Method m) {
    Class<?>[] p = m.getParameterTypes();
    if (p.length == 1 && p[0] != TaskContext.class) {
      return new ListenerMethod(bean, m, Kind.PAYLOAD, p[0], null, false, false);
    }
    if (p.length == 2 && p[1] == TaskContext.class) {
      return new ListenerMethod(bean, m, Kind.PAYLOAD, p[0], null, false, true);
    }
    throw invalid(m, "must take (Payload) or (Payload, TaskContext)");
  }

  Class<?> payloadType() {
    return payloadType;
  }

  private static PayloadCodec codecFor(Class<?> type, EventTypes types) {
    try {
      EventType<?> t = types.forClass(type);
      return t.codec();
    } catch (RuntimeException notRegistered) {
      return PayloadCodec.json();
    }
  }

  private static IllegalStateException invalid(Method m, String why) {
    return new IllegalStateException(
        "@Boxline method " + m.getDeclaringClass().getName() + "." + m.getName() + " " + why);
  }

  private Object decode(Event e) {
    return codec.decode(e.payload(), payloadType);
  }

  void onEvent(Event e, Connection tx) {
    Object[] args =
        switch (kind) {
          case EVENT -> new Object[] {e};
          case PAYLOAD -> new Object[] {decode(e)};
          case PAYLOAD_AND_EVENT -> new Object[] {decode(e), e};
          default -> throw new IllegalStateException(kind + " takes batches");
        };
    if (takesConnection) {
      Object[] withTx = java.util.Arrays.copyOf(args, args.length + 1);
      withTx[args.length] = tx;
      args = withTx;
    }
    invoke(args);
  }

  void onBatch(List<Event> batch) {
    if (kind == Kind.BATCH_OF_EVENTS) {
      invoke(new Object[] {batch});
      return;
    }
    List<Object> payloads = new ArrayList<>(batch.size());
    for (Event e : batch) {
      payloads.add(decode(e));
    }
    invoke(new Object[] {payloads});
  }

  void onTask(Object payload, TaskContext context) {
    invoke(takesTaskContext ? new Object[] {payload, context} : new Object[] {payload});
  }

  private void invoke(Object[] args) {
    try {
      method.invoke(bean, args);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new ListenerException(name() + " failed: " + cause, cause);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot call " + name(), e);
    }
  }

  /** A listener threw a checked exception: a failed attempt like any other. */
  static final class ListenerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ListenerException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
