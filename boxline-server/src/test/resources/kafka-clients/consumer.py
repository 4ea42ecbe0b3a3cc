"""One member of a consumer group, with confluent_kafka (librdkafka), against the Boxline Kafka
listener.

Usage: consumer.py BOOTSTRAP USER PASSWORD TOPIC GROUP STOP_FILE PAUSE_MS

Prints (standard output, flushed) "assigned P,P,..." on each assignment, "record PARTITION OFFSET
KEY VALUE" for each record it processed, and "commit PARTITION OFFSET" once a synchronous commit
of the offset after that record succeeded. Processing a record is printing it and PAUSE_MS of
sleep; the commit follows, so a record printed before a crash may be delivered again (at least
once) but never lost. Ends, closing the consumer (which leaves the group), when STOP_FILE exists.
"""

import os
import sys
import time

from confluent_kafka import Consumer, KafkaException

bootstrap, user, password, topic, group, stop_file = sys.argv[1:7]
pause_ms = int(sys.argv[7])

consumer = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": "PLAIN",
        "sasl.username": user,
        "sasl.password": password,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
    }
)


def assigned(c, partitions):
    print("assigned " + ",".join(str(p.partition) for p in partitions), flush=True)


def revoked(c, partitions):
    print("revoked " + ",".join(str(p.partition) for p in partitions), flush=True)


consumer.subscribe([topic], on_assign=assigned, on_revoke=revoked)
while not os.path.exists(stop_file):
    msg = consumer.poll(0.1)
    if msg is None:
        continue
    if msg.error():
        print("error " + str(msg.error()), file=sys.stderr, flush=True)
        continue
    print(
        "record %d %d %s %s"
        % (msg.partition(), msg.offset(), msg.key().decode(), msg.value().decode()),
        flush=True,
    )
    if pause_ms > 0:
        time.sleep(pause_ms / 1000.0)
    try:
        for tp in consumer.commit(message=msg, asynchronous=False):
            if tp.error is None:
                print("commit %d %d" % (tp.partition, tp.offset), flush=True)
            else:
                print("commit failed %d: %s" % (tp.partition, tp.error), file=sys.stderr, flush=True)
    except KafkaException as e:
        print("commit failed: %s" % e, file=sys.stderr, flush=True)
consumer.close()
