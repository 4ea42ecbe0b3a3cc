package io.boxline.spring.boot;

import io.boxline.Admin;
import io.boxline.Boxline;
import io.boxline.BoxlineException;
import io.boxline.BoxlineObserver;
import io.boxline.EventTypes;
import io.boxline.GroupPolicy;
import io.boxline.NamespacePath;
import io.boxline.RetentionPolicy;
import io.boxline.StartPosition;
import io.boxline.SubscriptionSpec;
import io.boxline.TopicName;
import io.boxline.jdbc.JdbcStore;
import java.util.List;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Builds Boxline from {@code boxline.*} (not started: {@link io.boxline.spring.BoxlineLifecycle}
 * starts it, migrating the schema unless told not to, once the context is refreshed) and, once it
 * started, creates the declared namespaces, topics and subscriptions that are missing. A wrong
 * value stops start-up with an {@link InvalidBoxlinePropertyException} that names the property and
 * the fix.
 */
final class BoxlineStarter {
  private BoxlineStarter() {}

  /** A Boxline built from {@code p}, not started. */
  static Boxline build(
      DataSource dataSource,
      BoxlineProperties p,
      EventTypes eventTypes,
      ObjectProvider<BoxlineObserver> observers,
      ObjectProvider<BoxlineBuilderCustomizer> customizers) {
    JdbcStore.Builder store = JdbcStore.builder(dataSource);
    property(
        "boxline.schema",
        p.getSchema(),
        "a name of letters, digits and _",
        () -> store.schema(p.getSchema()));
    if (!p.getTablePrefix().isEmpty()) {
      property(
          "boxline.table-prefix",
          p.getTablePrefix(),
          "letters, digits and _",
          () -> store.tablePrefix(p.getTablePrefix()));
    }
    Boxline.Builder b =
        Boxline.builder().store(store.build()).eventTypes(eventTypes).migrate(p.isMigrate());
    if (!p.getInstanceId().isEmpty()) {
      property(
          "boxline.instance-id",
          p.getInstanceId(),
          "up to 128 printable characters",
          () -> b.instanceId(p.getInstanceId()));
    }
    observers.orderedStream().forEach(b::observer);
    customizers.orderedStream().forEach(c -> c.customize(b));
    return b.build();
  }

  /**
   * Creates what {@code boxline.*} declares and the database lacks, on a started Boxline; existing
   * ones stay.
   */
  static void declare(Admin admin, BoxlineProperties p) {
    for (int i = 0; i < p.getNamespaces().size(); i++) {
      String ns = p.getNamespaces().get(i);
      String key = "boxline.namespaces[" + i + "]";
      NamespacePath path =
          property(key, ns, "a path such as acme/orders", () -> NamespacePath.of(ns));
      if (!admin.namespaces().contains(path)) {
        property(
            key,
            ns,
            "a path such as acme/orders",
            () -> {
              admin.createNamespace(path);
              return null;
            });
      }
    }
    p.getTopics()
        .forEach(
            (name, t) -> {
              String key = "boxline.topics[" + name + "]";
              TopicName topic =
                  property(
                      key,
                      name,
                      "namespace/topic, e.g. acme/orders/placed",
                      () -> TopicName.parse(name));
              property(
                  key + ".partitions",
                  String.valueOf(t.getPartitions()),
                  "1 to 65536, and the count the topic has if it exists (partition counts never change)",
                  () -> admin.createTopic(topic, t.getPartitions(), t.getSequencing()));
              if (t.getRetention() != null) {
                property(
                    key + ".retention",
                    String.valueOf(t.getRetention()),
                    "a positive duration such as 7d",
                    () -> {
                      admin.setRetention(topic, RetentionPolicy.byAge(t.getRetention()));
                      return null;
                    });
              }
            });
    if (p.getGroupPolicy().isSet()) {
      property(
          "boxline.group-policy",
          "(the fields given)",
          "values GroupPolicy accepts (see docs/guide/groups.md)",
          () -> {
            admin.setDefaultGroupPolicy(p.getGroupPolicy().applyTo(GroupPolicy.DEFAULT));
            return null;
          });
    }
    p.getSubscriptions()
        .forEach(
            (name, s) -> {
              String key = "boxline.subscriptions[" + name + "]";
              if (s.getTopics().isEmpty()) {
                throw new InvalidBoxlinePropertyException(
                    key + ".topics",
                    "(none)",
                    "list the topics it reads, e.g. [acme/orders/placed]",
                    null);
              }
              if (admin.subscription(name).isEmpty()) {
                create(admin, key, name, s);
              }
              if (s.getGroupPolicy().isSet()) {
                property(
                    key + ".group-policy",
                    "(the fields given)",
                    "values GroupPolicy accepts (see docs/guide/groups.md)",
                    () -> {
                      admin.setGroupPolicy(
                          name, s.getGroupPolicy().applyTo(admin.groupPolicy(name)));
                      return null;
                    });
              }
            });
  }

  private static void create(
      Admin admin, String key, String name, BoxlineProperties.Subscription s) {
    List<TopicName> topics =
        s.getTopics().stream()
            .map(
                t ->
                    property(
                        key + ".topics",
                        t,
                        "full topic names declared under boxline.topics or created before",
                        () -> TopicName.parse(t)))
            .toList();
    property(
        key,
        name,
        "a subscription name of letters, digits, '.', '_' and '-' whose topics exist",
        () ->
            admin.createSubscription(
                SubscriptionSpec.of(name, topics.toArray(TopicName[]::new))
                    .startAt(
                        s.getStart() == BoxlineProperties.Start.LATEST
                            ? StartPosition.latest()
                            : StartPosition.earliest())));
  }

  private static void property(String key, String value, String expected, Runnable apply) {
    property(
        key,
        value,
        expected,
        () -> {
          apply.run();
          return null;
        });
  }

  private static <T> T property(
      String key, String value, String expected, java.util.function.Supplier<T> apply) {
    try {
      return apply.get();
    } catch (BoxlineException | IllegalArgumentException e) {
      throw new InvalidBoxlinePropertyException(key, value, expected, e);
    }
  }
}
