#!/usr/bin/env python3
"""A Boxline server client in Python's standard library: publish events, tail a topic.

    python3 boxline_client.py publish URL TOKEN TOPIC N   # N events over 10 keys, 50 per request
    python3 boxline_client.py tail URL TOKEN TOPIC N      # read N events from the earliest, check order per key
    python3 boxline_client.py consume URL TOKEN SUBSCRIPTION MEMBER OUTFILE IDLE_SECONDS
        # a member of the subscription's group: fetch, handle (append "key payload-i id" to OUTFILE),
        # settle; stops after IDLE_SECONDS without events. Events whose payload has "fail": true are
        # retried once, then handled; "dead": true ones are dead-lettered.

The tail follows the topic with server-sent events and, when the connection drops, reconnects
with the last event id it saw, so it resumes where it stopped. Exit status 0 when every check held.
"""
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def request(url, token, method="GET", body=None, headers=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Authorization", "Bearer " + token)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    return urllib.request.urlopen(req, timeout=30)


def topic_url(base, topic):
    return base + "/v1/topics/" + urllib.parse.quote(topic, safe="")


def publish(base, token, topic, n):
    sent = 0
    while sent < n:
        batch = [{"key": "key-%d" % (i % 10), "type": "Counted", "payload": {"i": i}}
                 for i in range(sent, min(n, sent + 50))]
        with request(topic_url(base, topic) + "/events", token, "POST", {"events": batch}) as r:
            results = json.load(r)["results"]
            assert len(results) == len(batch), results
        sent += len(batch)
    print("published %d" % sent)


def tail(base, token, topic, n):
    last_id = None
    seen = {}
    count = 0
    reconnects = 0
    deadline = time.monotonic() + 60
    while count < n:
        if time.monotonic() > deadline:
            print("only %d of %d events within 60 s" % (count, n))
            return 1
        headers = {"Last-Event-ID": last_id} if last_id else {}
        url = topic_url(base, topic) + "/tail?from=earliest"
        try:
            with request(url, token, headers=headers) as stream:
                event_id = None
                for raw in stream:
                    if time.monotonic() > deadline:
                        break
                    line = raw.decode().rstrip("\n")
                    if line.startswith("id: "):
                        event_id = line[4:]
                    elif line.startswith("data: "):
                        event = json.loads(line[6:])
                        i = event["payload"]["i"]
                        key = event["key"]
                        if key in seen and seen[key] >= i:
                            print("order broken for %s: %d after %d" % (key, i, seen[key]))
                            return 1
                        seen[key] = i
                        count += 1
                        last_id = event_id
                        if count == n:
                            break
                        if count == n // 2 and reconnects == 0:
                            break  # drop the connection once, resume from the last id
        except OSError as e:
            print("connection lost (%s); resuming from %s" % (e, last_id))
        reconnects += 1
    print("tailed %d events over %d keys in order, %d reconnects" % (count, len(seen), reconnects))
    return 0


def consume(bases, token, subscription, member, outfile, idle_seconds):
    """BASES is one server URL or several, comma-separated: when one stops answering, the member
    goes on through the next (any server serves any member: the group's state is in the database)."""
    servers = bases.split(",")
    path = "/v1/subscriptions/%s/members/%s" % (
        urllib.parse.quote(subscription, safe=""), urllib.parse.quote(member, safe=""))
    current = 0
    idle_since = time.monotonic()
    handled = 0
    switches = 0
    with open(outfile, "a") as out:
        while time.monotonic() - idle_since < idle_seconds:
            url = servers[current] + path
            try:
                with request(url + "/fetch", token, "POST", {"max": 50, "waitMillis": 500}) as r:
                    batch = json.load(r)
            except urllib.error.HTTPError:
                raise
            except OSError as e:
                current = (current + 1) % len(servers)
                switches += 1
                print("server %s did not answer (%s); going on with %s" % (url, e, servers[current]))
                time.sleep(0.1)
                continue
            if not batch["events"]:
                continue
            idle_since = time.monotonic()
            settle = []
            waiting = set()  # keys with an event set aside for a retry in this batch
            for d in batch["events"]:
                event = d["event"]
                payload = event.get("payload") or {}
                if event["key"] is not None and event["key"] in waiting:
                    continue  # its key waits for the retry: left out, delivered after it
                if payload.get("dead"):
                    settle.append({"ackId": d["ackId"], "outcome": "dead", "reason": "poison"})
                    continue
                if payload.get("fail") and d["attempt"] == 1:
                    settle.append({"ackId": d["ackId"], "outcome": "retry", "retryIn": "200ms",
                                   "reason": "first attempt fails"})
                    if event["key"] is not None:
                        waiting.add(event["key"])
                    continue
                out.write("%s %s %s\n" % (event["key"], payload.get("i"), event["id"]))
                out.flush()
                handled += 1
                settle.append({"ackId": d["ackId"], "outcome": "done"})
            try:
                with request(url + "/settle", token, "POST", {"settle": settle}) as r:
                    json.load(r)
            except urllib.error.HTTPError as e:
                if e.code != 409:
                    raise
                # The partition moved to another member: its events come again there.
            except OSError:
                # The server died mid-settle: these events come again from the next one.
                current = (current + 1) % len(servers)
                switches += 1
    print("member %s handled %d, switched servers %d times" % (member, handled, switches))
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "consume":
        sys.exit(consume(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6],
                         float(sys.argv[7])))
    cmd, base, token, topic, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    if cmd == "publish":
        publish(base, token, topic, n)
        sys.exit(0)
    sys.exit(tail(base, token, topic, n))
