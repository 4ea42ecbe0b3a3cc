"""What the tests share: the server under test, unique names, bounded waits."""
import os
import time
import unittest
import uuid

URL = os.environ.get("BOXLINE_URL")
TOKEN = os.environ.get("BOXLINE_TOKEN")
# PythonClientIT sets this, so that a missing server fails the run rather than skipping its tests.
REQUIRED = os.environ.get("BOXLINE_REQUIRE_SERVER") == "1"


def server_test(cls):
    """Marks a TestCase class that needs BOXLINE_URL and BOXLINE_TOKEN (an admin token)."""
    if URL and TOKEN:
        return cls
    if REQUIRED:
        raise RuntimeError("BOXLINE_URL and BOXLINE_TOKEN must be set (BOXLINE_REQUIRE_SERVER=1)")
    return unittest.skip("set BOXLINE_URL and BOXLINE_TOKEN to run against a server")(cls)


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:10])


def wait_until(condition, timeout, what):
    """Polls `condition` until it is true; fails the test with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("within %.0f s: %s" % (timeout, what() if callable(what) else what))
        time.sleep(0.05)  # a poll interval, not a synchronisation: the condition decides
