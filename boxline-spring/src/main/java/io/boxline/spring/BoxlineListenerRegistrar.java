package io.boxline.spring;

import io.boxline.Boxline;
import io.boxline.Consumer;
import io.boxline.ConsumerBuilder;
import io.boxline.EventTypes;
import io.boxline.RetryPolicy;
import io.boxline.Tasks;
import io.boxline.TransactionRunner;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.util.ReflectionUtils;

/**
 * Finds {@link BoxlineListener} and {@link BoxlineTask} methods on the context's beans and runs
 * them: a consumer per listener and one task worker, started once the context is refreshed and
 * stopped — each finishing its in-flight batch within its shutdown timeout — before Boxline and the
 * data source go away (its phase is {@link #PHASE}, above Boxline's and below the web server's, so
 * requests stop first, then the consumers).
 *
 * <p>Transactional listeners run in transactions of the context's {@link
 * PlatformTransactionManager} (a {@link DataSourceTransactionManager} on the data source when there
 * is none), through {@link SpringTransactionRunner}.
 *
 * <p>The Boxline, data source and {@link EventTypes} beans are looked up when the context starts,
 * so declaring this post-processor initialises none of them early. Register it with a static
 * {@code @Bean} method.
 */
public final class BoxlineListenerRegistrar
    implements BeanPostProcessor, SmartLifecycle, BeanFactoryAware {
  /** Starts after the beans, stops before Boxline's beans are destroyed and before a web server. */
  public static final int PHASE = Integer.MAX_VALUE - 3072;

  private final List<Found> listeners = new ArrayList<>();
  private final Map<String, ListenerMethod> tasks = new LinkedHashMap<>();
  private final List<Consumer> running = new ArrayList<>();
  private BeanFactory beans;
  private volatile boolean started;

  private record Found(Object bean, Method method, BoxlineListener spec) {}

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    this.beans = beanFactory;
  }

  @Override
  public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
    Class<?> type = AopUtils.getTargetClass(bean);
    ReflectionUtils.doWithMethods(
        type,
        m -> {
          BoxlineListener l = AnnotatedElementUtils.findMergedAnnotation(m, BoxlineListener.class);
          if (l != null) {
            synchronized (listeners) {
              listeners.add(new Found(bean, m, l));
            }
          }
          BoxlineTask t = AnnotatedElementUtils.findMergedAnnotation(m, BoxlineTask.class);
          if (t != null) {
            synchronized (tasks) {
              ListenerMethod prior = tasks.put(t.value(), ListenerMethod.task(bean, m));
              if (prior != null) {
                throw new IllegalStateException(
                    "task type '"
                        + t.value()
                        + "' has two @BoxlineTask methods: "
                        + prior.name()
                        + " and "
                        + type.getName()
                        + "."
                        + m.getName()
                        + "; give each type one handler");
              }
            }
          }
        },
        ReflectionUtils.USER_DECLARED_METHODS);
    return bean;
  }

  @Override
  public synchronized void start() {
    if (started) {
      return;
    }
    Boxline boxline = beans.getBean(Boxline.class);
    DataSource dataSource = beans.getBean(DataSource.class);
    PlatformTransactionManager tm =
        beans
            .getBeanProvider(PlatformTransactionManager.class)
            .getIfUnique(() -> new DataSourceTransactionManager(dataSource));
    TransactionRunner runner = new SpringTransactionRunner(tm, dataSource);
    List<ListenerDecorator> decorators =
        beans.getBeanProvider(ListenerDecorator.class).orderedStream().toList();
    List<ConsumerCustomizer> customizers =
        beans.getBeanProvider(ConsumerCustomizer.class).orderedStream().toList();
    EventTypes types = beans.getBeanProvider(EventTypes.class).getIfAvailable(EventTypes::empty);
    ListenerDefaults defaults =
        beans.getBeanProvider(ListenerDefaults.class).getIfAvailable(() -> ListenerDefaults.NONE);
    try {
      for (Found f : listeners) {
        if (f.spec.autoStartup()) {
          running.add(startListener(boxline, runner, decorators, customizers, types, defaults, f));
        }
      }
      if (!tasks.isEmpty()) {
        running.add(startTasks(boxline, defaults));
      }
    } catch (RuntimeException e) {
      stopAll();
      throw e;
    }
    started = true;
  }

  private static Consumer startListener(
      Boxline boxline,
      TransactionRunner runner,
      List<ListenerDecorator> decorators,
      List<ConsumerCustomizer> customizers,
      EventTypes types,
      ListenerDefaults d,
      Found f) {
    BoxlineListener spec = f.spec;
    ListenerMethod m = ListenerMethod.listener(f.bean, f.method, types, spec.transactional());
    ConsumerBuilder b;
    try {
      b = boxline.consumer(spec.subscription());
    } catch (RuntimeException e) {
      throw new IllegalStateException("@BoxlineListener " + m.name() + ": " + e.getMessage(), e);
    }
    d.apply(b);
    int attempts = spec.maxAttempts() > 0 ? spec.maxAttempts() : d.maxAttempts();
    if (attempts > 0) {
      b.retryPolicy(RetryPolicy.DEFAULT.maxAttempts(attempts));
    }
    if (spec.batchSize() > 0) {
      b.batchSize(spec.batchSize());
    }
    if (spec.concurrency() > 0) {
      b.concurrency(spec.concurrency());
    }
    if (spec.parallelByKey() > 0) {
      b.parallelByKey(spec.parallelByKey());
    }
    if (!spec.handlerTimeout().isEmpty()) {
      b.handlerTimeout(duration(m, "handlerTimeout", spec.handlerTimeout()));
    }
    if (!spec.id().isEmpty()) {
      b.id(spec.id());
    }
    String sub = spec.subscription();
    for (ConsumerCustomizer c : customizers) {
      c.customize(sub, b);
    }
    if (spec.transactional()) {
      io.boxline.TransactionalHandler h = (event, tx) -> m.onEvent(event, tx);
      for (ListenerDecorator dec : decorators) {
        h = dec.transactionalHandler(sub, h);
      }
      b.transactionalHandler(h, runner);
    } else if (m.kind == ListenerMethod.Kind.BATCH_OF_EVENTS
        || m.kind == ListenerMethod.Kind.BATCH_OF_PAYLOADS) {
      io.boxline.BatchHandler h = m::onBatch;
      for (ListenerDecorator dec : decorators) {
        h = dec.batchHandler(sub, h);
      }
      b.batchHandler(h);
    } else {
      io.boxline.EventHandler h = event -> m.onEvent(event, null);
      for (ListenerDecorator dec : decorators) {
        h = dec.handler(sub, h);
      }
      b.handler(h);
    }
    return b.start();
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private Consumer startTasks(Boxline boxline, ListenerDefaults d) {
    Tasks.Worker w = boxline.tasks().worker();
    d.apply(w);
    if (d.maxAttempts() > 0) {
      w.retryPolicy(RetryPolicy.DEFAULT.maxAttempts(d.maxAttempts()));
    }
    tasks.forEach(
        (type, m) ->
            w.handleWithContext(
                type, (Class) m.payloadType(), (payload, context) -> m.onTask(payload, context)));
    return w.start();
  }

  private static Duration duration(ListenerMethod m, String attribute, String text) {
    try {
      return DurationFormatterUtils.detectAndParse(text);
    } catch (RuntimeException e) {
      throw new IllegalStateException(
          "@BoxlineListener "
              + m.name()
              + ": "
              + attribute
              + " = '"
              + text
              + "' is not a duration; write it as 30s, 500ms, 2m or PT30S",
          e);
    }
  }

  @Override
  public synchronized void stop() {
    stopAll();
    started = false;
  }

  /** Closes every consumer, each within its shutdown timeout, the last started first. */
  private void stopAll() {
    RuntimeException failed = null;
    for (int i = running.size() - 1; i >= 0; i--) {
      try {
        running.get(i).close();
      } catch (RuntimeException e) {
        failed = failed == null ? e : failed;
      }
    }
    running.clear();
    if (failed != null) {
      throw failed;
    }
  }

  @Override
  public boolean isRunning() {
    return started;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }

  /** The consumers running now (one per listener, and the task worker), for inspection. */
  public synchronized List<Consumer> consumers() {
    return List.copyOf(running);
  }
}
