"""Produces keyed records with confluent_kafka (librdkafka) to the Boxline Kafka listener.

Usage: producer.py BOOTSTRAP USER PASSWORD TOPIC COUNT KEYS PAUSE_MS

Record i has key k<i % KEYS> and value <how many records of that key came before>, so the
values of a key count up from 0. One line per delivery report: "delivered PARTITION KEY VALUE".
The partitioner is murmur2_random, Kafka's (and Boxline's) murmur2 for keyed records, so the
partition a delivery report names is the one Boxline put the record on. Exits 0 when every
record was delivered.
"""

import sys
import time

from confluent_kafka import Producer

bootstrap, user, password, topic = sys.argv[1:5]
count, keys, pause_ms = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])

producer = Producer(
    {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": "PLAIN",
        "sasl.username": user,
        "sasl.password": password,
        "partitioner": "murmur2_random",
        "acks": "all",
        "linger.ms": 5,
        "message.timeout.ms": 30000,
    }
)
failures = []


def report(err, msg):
    if err is not None:
        failures.append(err)
        print("failed %s %s" % (msg.key().decode(), err), flush=True)
    else:
        print(
            "delivered %d %s %s" % (msg.partition(), msg.key().decode(), msg.value().decode()),
            flush=True,
        )


counters = {}
for i in range(count):
    key = "k%d" % (i % keys)
    value = counters.get(key, 0)
    counters[key] = value + 1
    producer.produce(topic, key=key, value=str(value), on_delivery=report)
    producer.poll(0)
    if pause_ms > 0:
        time.sleep(pause_ms / 1000.0)
left = producer.flush(30)
if left or failures:
    print("undelivered: %d, failed: %d" % (left, len(failures)), flush=True)
    sys.exit(1)
