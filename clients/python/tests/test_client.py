"""Client tests: publishing and reading back, tail resume after a cut connection, HTTP details."""
import http.server
import json
import socket
import threading
import unittest
import urllib.parse

import boxline
from support import TOKEN, URL, server_test, unique, wait_until


def seg(name):
    return urllib.parse.quote(name, safe="")


@server_test
class PublishTest(unittest.TestCase):
    def setUp(self):
        self.client = boxline.Client(URL, TOKEN)
        self.topic = self.client.create_topic(unique("pytest/publish"), partitions=2).name

    def tearDown(self):
        self.client.close()

    def read_back(self, partition, count):
        """The partition's events once `count` are there: the sequencer places them just after
        the publish is answered."""
        def read():
            answer = self.client.request(
                "GET", "/v1/topics/%s/partitions/%d/events" % (seg(self.topic), partition))
            events = [boxline.Event.from_json(e) for e in answer["events"]]
            return events if len(events) >= count else None
        return wait_until(read, 20, "%d events in partition %d" % (count, partition))

    def test_one_event_is_stored_as_sent_and_its_idempotency_key_makes_a_resend_a_duplicate(self):
        first = self.client.publish(self.topic, {"orderId": 7, "total": "99.50"}, key="order-7",
                                    type="OrderPlaced", headers={"tenant": "acme"},
                                    idempotency_key="order-7-placed")
        self.assertIsInstance(first, boxline.Published)
        self.assertFalse(first.duplicate)
        again = self.client.publish(self.topic, {"orderId": 7, "total": "99.50"}, key="order-7",
                                    type="OrderPlaced", idempotency_key="order-7-placed")
        self.assertTrue(again.duplicate)
        self.assertEqual(again.id, first.id)
        events = self.read_back(first.partition, 1)
        self.assertEqual(len(events), 1, "the duplicate is not stored again")
        e = events[0]
        self.assertEqual((e.id, e.key, e.type, e.topic), (first.id, "order-7", "OrderPlaced", self.topic))
        self.assertEqual(e.payload, {"orderId": 7, "total": "99.50"})
        self.assertEqual(e.headers, {"tenant": "acme"})
        self.assertEqual(e.sequence, 1)

    def test_a_batch_is_stored_in_order_with_one_result_per_event(self):
        events = [boxline.OutgoingEvent(type="Counted", key="k", payload={"i": i}) for i in range(5)]
        events.append({"type": "Blob", "key": "k", "payloadBase64": "AAEC",
                       "contentType": "application/octet-stream"})
        result = self.client.publish_batch(self.topic, events)
        self.assertIsInstance(result, boxline.PublishResult)
        self.assertEqual(result.topic, self.topic)
        self.assertEqual(len(result.results), 6)
        self.assertEqual(len({r.partition for r in result.results}), 1, "one key, one partition")
        stored = self.read_back(result.results[0].partition, 6)
        self.assertEqual([e.id for e in stored], [r.id for r in result.results])
        self.assertEqual([e.payload for e in stored[:5]], [{"i": i} for i in range(5)])
        self.assertEqual(stored[5].payload_base64, "AAEC")
        self.assertEqual([e.sequence for e in stored], list(range(1, 7)))

    def test_errors_come_as_their_classes(self):
        with self.assertRaises(boxline.NotFound) as nf:
            self.client.publish(unique("pytest/missing"), {}, type="T")
        self.assertEqual(nf.exception.error, "not_found")
        with self.assertRaises(boxline.BadRequest) as bad:
            self.client.publish_batch(self.topic, [{"type": "T", "kye": "typo"}])
        self.assertIn("kye", bad.exception.message)
        with boxline.Client(URL, "not-a-token-of-this-server") as stranger:
            with self.assertRaises(boxline.Unauthorized):
                stranger.whoami()


class _Proxy:
    """A TCP proxy to the server whose connections the test can cut, as a network would."""

    def __init__(self, target):
        url = urllib.parse.urlsplit(target)
        self.target = (url.hostname, url.port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = "http://127.0.0.1:%d" % self.listener.getsockname()[1]
        self.accepted = 0
        self.sockets = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.accepted += 1
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self.lock:
            sockets, self.sockets = self.sockets, []
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self):
        self.listener.close()
        self.cut()


@server_test
class TailTest(unittest.TestCase):
    def test_a_tail_resumes_after_its_connection_is_cut_and_sees_every_event_once_in_order(self):
        client = boxline.Client(URL, TOKEN)
        topic = client.create_topic(unique("pytest/tail"), partitions=3).name
        published = []
        for n in range(3):
            result = client.publish_batch(topic, [
                {"type": "Counted", "key": "key-%d" % (i % 6), "payload": {"i": i}}
                for i in range(n * 20, n * 20 + 20)])
            published += [r.id for r in result.results]
        proxy = _Proxy(URL)
        tail = boxline.Client(proxy.url, TOKEN).tail(topic, from_="earliest")
        # The tail blocks while waiting; closing it from a timer bounds the test if events are missing.
        watchdog = threading.Timer(60, tail.close)
        watchdog.start()
        seen, positions = [], []
        try:
            for event in tail:
                seen.append(event)
                positions.append(tail.position)
                if len(seen) == 25:
                    proxy.cut()  # mid-stream: the next read finds the connection gone
                    # Events published while it is away come too, after the resume.
                    more = client.publish_batch(topic, [
                        {"type": "Counted", "key": "key-%d" % (i % 6), "payload": {"i": i}}
                        for i in range(60, 80)])
                    published += [r.id for r in more.results]
                if len(seen) == 80:
                    break
        finally:
            watchdog.cancel()
            tail.close()
            proxy.close()
            client.close()
        ids = [e.id for e in seen]
        self.assertEqual(len(ids), 80, "events within 60 s (the tail was closed): %d" % len(ids))
        self.assertEqual(len(set(ids)), 80, "no event twice")
        self.assertEqual(set(ids), set(published), "every published event")
        self.assertGreaterEqual(proxy.accepted, 2, "the tail reconnected after the cut")
        for key in {e.key for e in seen}:
            order = [e.payload["i"] for e in seen if e.key == key]
            self.assertEqual(order, sorted(order), "order of %s" % key)
        for p in range(3):
            seqs = [e.sequence for e in seen if e.partition == p]
            self.assertEqual(seqs, list(range(1, len(seqs) + 1)), "partition %d in order" % p)
        self.assertIn("%d:" % seen[-1].partition, positions[-1])


class HttpDetailsTest(unittest.TestCase):
    """Against a small local HTTP server that answers as Boxline does, to see what goes over the
    wire: the headers, keep-alive, and a 503 with Retry-After."""

    def setUp(self):
        self.requests = []
        self.connections = set()
        self.unavailable = 0
        test = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                test.requests.append(dict(self.headers))
                test.connections.add(self.client_address)
                if test.unavailable > 0:
                    test.unavailable -= 1
                    self.answer(503, {"status": 503, "error": "overloaded", "message": "busy"},
                                {"Retry-After": "0"})
                else:
                    self.answer(200, {"name": "admin", "role": "admin"})

            def answer(self, status, body, headers=None):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.client = boxline.Client("http://127.0.0.1:%d" % self.server.server_port,
                                     "secret-token", retries=2)

    def tearDown(self):
        self.client.close()
        self.server.shutdown()
        self.server.server_close()

    def test_requests_carry_the_token_and_user_agent_over_one_kept_alive_connection(self):
        self.assertEqual(self.client.whoami(), boxline.Caller(name="admin", role="admin"))
        self.client.whoami()
        self.assertEqual(len(self.requests), 2)
        for headers in self.requests:
            self.assertEqual(headers.get("User-Agent"), "boxline-python/0.1.0")
            self.assertEqual(headers.get("Authorization"), "Bearer secret-token")
        self.assertEqual(len(self.connections), 1, "the second request reuses the connection")

    def test_a_503_with_retry_after_is_tried_again_a_bounded_number_of_times(self):
        self.unavailable = 2
        self.assertEqual(self.client.whoami().name, "admin")
        self.assertEqual(len(self.requests), 3)
        self.unavailable = 10
        with self.assertRaises(boxline.Unavailable) as e:
            self.client.whoami()
        self.assertEqual(e.exception.retry_after, 0.0)
        self.assertEqual(len(self.requests), 6, "one try and two retries")


if __name__ == "__main__":
    unittest.main()
