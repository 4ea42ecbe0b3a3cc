package io.boxline.chaos;

/** The kinds of child JVM in a chaos run. */
enum Role {
  PRODUCER("producer", ProducerMain.class),
  CONSUMER("consumer", ConsumerMain.class),
  RELAY("relay", RelayMain.class),
  WORKER("worker", TaskWorkerMain.class);

  final String label;
  final Class<?> main;

  Role(String label, Class<?> main) {
    this.label = label;
    this.main = main;
  }
}
