package io.boxline.spring.boot;

import io.boxline.Sequencing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/** Boxline's settings under {@code boxline.*}. */
@ConfigurationProperties(prefix = "boxline")
public class BoxlineProperties {
  /** Whether Boxline is configured at all. */
  private boolean enabled = true;

  /** Whether listener and task beans start with the application context. */
  private boolean autoStart = true;

  /** The schema (MariaDB: database) that holds Boxline's tables. */
  private String schema = "boxline";

  /** A prefix for Boxline's table names, for a schema shared with other tables. */
  private String tablePrefix = "";

  /**
   * Whether Boxline migrates its schema at start (under a database lock); off for a database user
   * with data privileges only, whose schema an owner migrates.
   */
  private boolean migrate = true;

  /** This instance's id (sequencer lease owner, consumer ids); empty: host and process. */
  private String instanceId = "";

  /**
   * The longest wait for Boxline to close when the context closes (after the listeners stopped,
   * each within {@code boxline.listener.shutdown-timeout}); the context goes on closing after it.
   */
  private Duration stopTimeout = Duration.ofSeconds(30);

  /**
   * Whether objects published with Spring's ApplicationEventPublisher whose class is a registered
   * EventType are written to Boxline in the publishing transaction.
   */
  private boolean applicationEvents = true;

  /**
   * Whether Boxline is the target of Spring Modulith's event externalization (when Modulith's
   * events are on the class path).
   */
  private boolean modulithExternalization = true;

  /** Namespaces created at start when missing, e.g. {@code acme/orders}. */
  private List<String> namespaces = new ArrayList<>();

  /** Topics created at start when missing, by full name ({@code namespace/topic}). */
  private Map<String, Topic> topics = new LinkedHashMap<>();

  /** Subscriptions created at start when missing, by name. */
  private Map<String, Subscription> subscriptions = new LinkedHashMap<>();

  /** The cluster's default consumer group policy (set at start when any field is given). */
  private GroupPolicyProperties groupPolicy = new GroupPolicyProperties();

  /** Defaults for every {@code @BoxlineListener} consumer and the task worker. */
  private Listener listener = new Listener();

  private Health health = new Health();

  private Endpoint endpoint = new Endpoint();

  public static class Topic {
    /** Partition count (1 to 65,536); fixed for the topic's life. */
    private int partitions = 16;

    /** How events are numbered: SEQUENCER (default) or IN_TRANSACTION. */
    private Sequencing sequencing = Sequencing.SEQUENCER;

    /** Keep events this long (retention by age); unset: keep until every subscription read them. */
    private Duration retention;

    public int getPartitions() {
      return partitions;
    }

    public void setPartitions(int partitions) {
      this.partitions = partitions;
    }

    public Sequencing getSequencing() {
      return sequencing;
    }

    public void setSequencing(Sequencing sequencing) {
      this.sequencing = sequencing;
    }

    public Duration getRetention() {
      return retention;
    }

    public void setRetention(Duration retention) {
      this.retention = retention;
    }
  }

  public static class Subscription {
    /** The topics it reads, by full name. */
    private List<String> topics = new ArrayList<>();

    /** Where a new subscription starts: earliest (default) or latest. */
    private Start start = Start.EARLIEST;

    /** This subscription's group policy (set at start when any field is given). */
    private GroupPolicyProperties groupPolicy = new GroupPolicyProperties();

    public GroupPolicyProperties getGroupPolicy() {
      return groupPolicy;
    }

    public void setGroupPolicy(GroupPolicyProperties groupPolicy) {
      this.groupPolicy = groupPolicy;
    }

    public List<String> getTopics() {
      return topics;
    }

    public void setTopics(List<String> topics) {
      this.topics = topics;
    }

    public Start getStart() {
      return start;
    }

    public void setStart(Start start) {
      this.start = start;
    }
  }

  /** Where a new subscription starts reading. */
  public enum Start {
    EARLIEST,
    LATEST
  }

  public static class Listener {
    /** Events per batch; 0: Boxline's default (100). */
    private int batchSize;

    /** Worker threads per consumer; 0: Boxline's default. */
    private int concurrency;

    /** Attempts before an event is dead-lettered; 0: the retry policy's default. */
    private int maxAttempts;

    /** How long stopping waits for the in-flight batch. */
    private Duration shutdownTimeout = Duration.ofSeconds(10);

    /** A batch running longer is interrupted and fails; unset: no timeout. */
    private Duration handlerTimeout;

    /** Worker threads of the task worker; 0: Boxline's default. */
    private int taskConcurrency;

    public int getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(int batchSize) {
      this.batchSize = batchSize;
    }

    public int getConcurrency() {
      return concurrency;
    }

    public void setConcurrency(int concurrency) {
      this.concurrency = concurrency;
    }

    public int getMaxAttempts() {
      return maxAttempts;
    }

    public void setMaxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
    }

    public Duration getShutdownTimeout() {
      return shutdownTimeout;
    }

    public void setShutdownTimeout(Duration shutdownTimeout) {
      this.shutdownTimeout = shutdownTimeout;
    }

    public Duration getHandlerTimeout() {
      return handlerTimeout;
    }

    public void setHandlerTimeout(Duration handlerTimeout) {
      this.handlerTimeout = handlerTimeout;
    }

    public int getTaskConcurrency() {
      return taskConcurrency;
    }

    public void setTaskConcurrency(int taskConcurrency) {
      this.taskConcurrency = taskConcurrency;
    }
  }

  public static class Health {
    /**
     * The health indicator reports DOWN when a subscription's oldest unhandled event has waited
     * longer than this; unset: lag does not affect health.
     */
    private Duration maxLagAge;

    public Duration getMaxLagAge() {
      return maxLagAge;
    }

    public void setMaxLagAge(Duration maxLagAge) {
      this.maxLagAge = maxLagAge;
    }
  }

  public static class Endpoint {
    /** Whether the actuator endpoint may redrive and discard dead letters (write operations). */
    private boolean writeEnabled;

    public boolean isWriteEnabled() {
      return writeEnabled;
    }

    public void setWriteEnabled(boolean writeEnabled) {
      this.writeEnabled = writeEnabled;
    }
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public boolean isAutoStart() {
    return autoStart;
  }

  public void setAutoStart(boolean autoStart) {
    this.autoStart = autoStart;
  }

  public boolean isApplicationEvents() {
    return applicationEvents;
  }

  public void setApplicationEvents(boolean applicationEvents) {
    this.applicationEvents = applicationEvents;
  }

  public boolean isModulithExternalization() {
    return modulithExternalization;
  }

  public void setModulithExternalization(boolean modulithExternalization) {
    this.modulithExternalization = modulithExternalization;
  }

  public String getSchema() {
    return schema;
  }

  public void setSchema(String schema) {
    this.schema = schema;
  }

  public String getTablePrefix() {
    return tablePrefix;
  }

  public void setTablePrefix(String tablePrefix) {
    this.tablePrefix = tablePrefix;
  }

  public boolean isMigrate() {
    return migrate;
  }

  public void setMigrate(boolean migrate) {
    this.migrate = migrate;
  }

  public Duration getStopTimeout() {
    return stopTimeout;
  }

  public void setStopTimeout(Duration stopTimeout) {
    this.stopTimeout = stopTimeout;
  }

  public String getInstanceId() {
    return instanceId;
  }

  public void setInstanceId(String instanceId) {
    this.instanceId = instanceId;
  }

  public List<String> getNamespaces() {
    return namespaces;
  }

  public void setNamespaces(List<String> namespaces) {
    this.namespaces = namespaces;
  }

  public Map<String, Topic> getTopics() {
    return topics;
  }

  public void setTopics(Map<String, Topic> topics) {
    this.topics = topics;
  }

  public Map<String, Subscription> getSubscriptions() {
    return subscriptions;
  }

  public void setSubscriptions(Map<String, Subscription> subscriptions) {
    this.subscriptions = subscriptions;
  }

  public GroupPolicyProperties getGroupPolicy() {
    return groupPolicy;
  }

  public void setGroupPolicy(GroupPolicyProperties groupPolicy) {
    this.groupPolicy = groupPolicy;
  }

  public Listener getListener() {
    return listener;
  }

  public void setListener(Listener listener) {
    this.listener = listener;
  }

  public Health getHealth() {
    return health;
  }

  public void setHealth(Health health) {
    this.health = health;
  }

  public Endpoint getEndpoint() {
    return endpoint;
  }

  public void setEndpoint(Endpoint endpoint) {
    this.endpoint = endpoint;
  }
}
