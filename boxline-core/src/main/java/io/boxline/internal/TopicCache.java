package io.boxline.internal;

import io.boxline.NotFoundException;
import io.boxline.TopicInfo;
import io.boxline.TopicName;
import io.boxline.spi.CatalogStore;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Topics never change once created (partition counts are fixed), so they are cached forever. */
final class TopicCache {
  private final CatalogStore store;
  private final Map<TopicName, TopicInfo> byName = new ConcurrentHashMap<>();
  private final Map<Long, TopicInfo> byId = new ConcurrentHashMap<>();

  TopicCache(CatalogStore store) {
    this.store = store;
  }

  TopicInfo get(TopicName name) {
    TopicInfo t = byName.get(name);
    if (t == null) {
      t =
          store
              .findTopic(name)
              .orElseThrow(
                  () ->
                      new NotFoundException(
                          "topic '"
                              + name
                              + "' does not exist; create it first with admin().createTopic(topic,"
                              + " partitions)"));
      put(t);
    }
    return t;
  }

  TopicInfo get(long id) {
    TopicInfo t = byId.get(id);
    if (t == null) {
      t =
          store
              .findTopic(id)
              .orElseThrow(() -> new NotFoundException("topic with id " + id + " does not exist"));
      put(t);
    }
    return t;
  }

  /** The topic with {@code id}, or empty when it was deleted. */
  java.util.Optional<TopicInfo> find(long id) {
    TopicInfo t = byId.get(id);
    return t != null ? java.util.Optional.of(t) : store.findTopic(id);
  }

  /** The topic was deleted: a topic created later under its name has another id. */
  void forget(TopicInfo t) {
    byName.remove(t.name(), t);
    byId.remove(t.id());
  }

  void put(TopicInfo t) {
    byName.put(t.name(), t);
    byId.put(t.id(), t);
  }
}
