"""Unit tests without a server: generated models, the SSE parser, errors."""
import importlib.util
import io
import os
import unittest

import boxline
from boxline import models
from boxline.client import Tail, _sse
from boxline.errors import error_for

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATOR = os.path.join(HERE, "..", "tools", "generate_models.py")


def load_generator():
    spec = importlib.util.spec_from_file_location("generate_models", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GeneratedModelsTest(unittest.TestCase):
    def test_models_py_is_generated_from_the_current_openapi_json(self):
        generator = load_generator()
        expected = generator.render()
        for path in (generator.TARGET, models.__file__):
            with open(path, encoding="utf-8") as f:
                self.assertTrue(
                    f.read() == expected,
                    "%s differs from what openapi.json generates: run python3 "
                    "clients/python/tools/generate_models.py (and reinstall)" % path)

    def test_an_event_parses_with_nested_types_and_ignores_unknown_fields(self):
        batch = boxline.Batch.from_json({
            "events": [{"ackId": "a1", "attempt": 2, "event": {
                "id": "0b6c1f3e-8c1a-4d4e-9a55-3f1e2d7c9b10", "topic": "acme/orders", "partition": 3,
                "sequence": 1042, "key": "order-1042", "type": "OrderPlaced", "source": None,
                "contentType": "application/json", "headers": {"h": "v"},
                "createdAt": "2026-01-31T12:00:01.250Z", "deliverAt": None,
                "payload": {"orderId": 1042}, "aFieldFromANewerServer": 1}}],
            "partitions": [{"topic": "acme/orders", "partition": 3}],
            "checkInWithinMillis": 2000})
        d = batch.events[0]
        self.assertIsInstance(d, boxline.Delivery)
        self.assertEqual((d.ack_id, d.attempt), ("a1", 2))
        self.assertIsInstance(d.event, boxline.Event)
        self.assertEqual(d.event.payload, {"orderId": 1042})
        self.assertEqual(d.event.content_type, "application/json")
        self.assertIsNone(d.event.payload_base64)
        self.assertEqual(batch.partitions, [boxline.PartitionRef("acme/orders", 3)])
        self.assertEqual(batch.check_in_within_millis, 2000)
        self.assertIsNone(batch.settled)
        with self.assertRaises(Exception):
            d.attempt = 3  # frozen

    def test_to_json_uses_wire_names_and_leaves_unset_fields_out(self):
        self.assertEqual(
            boxline.Settlement(ack_id="a", outcome="retry", retry_in="250ms").to_json(),
            {"ackId": "a", "outcome": "retry", "retryIn": "250ms"})
        self.assertEqual(boxline.OutgoingEvent(type="T", idempotency_key="k").to_json(),
                         {"type": "T", "idempotencyKey": "k"})


class ErrorsTest(unittest.TestCase):
    def test_each_status_has_its_class_and_a_conflict_names_the_refused_partitions(self):
        for status, cls in [(400, boxline.BadRequest), (401, boxline.Unauthorized),
                            (403, boxline.Forbidden), (404, boxline.NotFound),
                            (409, boxline.Conflict), (503, boxline.Unavailable)]:
            err = error_for(status, {"status": status, "error": "x", "message": "m"})
            self.assertIsInstance(err, cls)
            self.assertIsInstance(err, boxline.BoxlineError)
            self.assertEqual((err.status, err.error, err.message), (status, "x", "m"))
        conflict = error_for(409, {"status": 409, "error": "conflict", "message": "moved",
                                   "settled": 12, "refused": [{"topic": "a/b", "partition": 3}]})
        self.assertEqual(conflict.refused, [boxline.PartitionRef("a/b", 3)])
        self.assertEqual(conflict.settled, 12)
        self.assertEqual(error_for(500, {"message": "boom"}).__class__, boxline.BoxlineError)


class InstalledPackageTest(unittest.TestCase):
    @unittest.skipUnless(os.environ.get("BOXLINE_EXPECT_PACKAGE_DIR"), "not run by PythonClientIT")
    def test_the_package_under_test_is_the_installed_one(self):
        # PythonClientIT installs with pip and sets this, so the source tree is not what is tested.
        expected = os.path.realpath(os.environ["BOXLINE_EXPECT_PACKAGE_DIR"])
        self.assertEqual(os.path.dirname(os.path.realpath(boxline.__file__)), expected)
        self.assertEqual(boxline.__version__, "0.1.0")


class NamesTest(unittest.TestCase):
    def test_the_handler_outcomes_are_exceptions(self):
        # boxline.DeadLetter is the exception; the dead-letter record is boxline.models.DeadLetter.
        for cls in (boxline.Retry, boxline.DeadLetter):
            self.assertTrue(issubclass(cls, Exception), cls)
        self.assertEqual(boxline.Retry(after=1.5).after, 1.5)
        self.assertEqual(boxline.DeadLetter("poison").reason, "poison")


class SseTest(unittest.TestCase):
    def test_the_parser_joins_data_lines_skips_comments_and_takes_retry(self):
        stream = io.BytesIO(
            b"retry: 2500\n\n: keep-alive\n\n"
            b"id: 0:1\nevent: event\ndata: {\"a\":\ndata: 1}\n\n"
            b"id: 0:1,1:4\r\nevent: event\r\ndata: 2\r\n\r\n")
        tail = Tail.__new__(Tail)
        tail._retry_ms = 1000
        got = list(_sse(stream, tail))
        self.assertEqual(got, [("0:1", "event", "{\"a\":\n1}"), ("0:1,1:4", "event", "2")])
        self.assertEqual(tail._retry_ms, 2500)


if __name__ == "__main__":
    unittest.main()
