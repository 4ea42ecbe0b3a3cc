"""Group member tests: outcomes and order, fencing, and a member process killed mid-run."""
import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import unittest
from collections import defaultdict

import boxline
from support import TOKEN, URL, server_test, unique, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))


class Running:
    """A Member's run() on an event loop in a thread of its own."""

    def __init__(self, member, handler):
        self.member = member
        self.error = None
        self.thread = threading.Thread(target=self._run, args=(handler,), daemon=True)
        self.thread.start()

    def _run(self, handler):
        try:
            asyncio.run(self.member.run(handler))
        except BaseException as e:  # noqa: BLE001 - reported by stop()
            self.error = e

    def stop(self, timeout=30):
        self.member.stop()
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise AssertionError("the member did not stop within %d s" % timeout)
        if self.error is not None:
            raise AssertionError("run() failed: %r" % self.error) from self.error


def member_ids(client, subscription):
    return [m["id"].split(":", 1)[-1] for m in client.group(subscription)["members"]]


@server_test
class MemberTest(unittest.TestCase):
    def setUp(self):
        self.client = boxline.Client(URL, TOKEN)
        self.topic = self.client.create_topic(unique("pytest/member"), partitions=2).name
        self.subscription = self.client.create_subscription(
            unique("pytest-sub"), [self.topic], start="earliest").name

    def tearDown(self):
        self.client.close()

    def publish(self, n, keys):
        events = [{"type": "Counted", "key": "key-%d" % (i % keys), "payload": {"i": i}}
                  for i in range(n)]
        return [r.id for r in self.client.publish_batch(self.topic, events).results]

    def test_outcomes_follow_the_handler_and_each_key_is_handled_in_order(self):
        self.publish(40, 4)
        done, attempts = [], defaultdict(list)
        in_flight, most_in_flight = [0], [0]

        async def handle(d):  # an async handler; i 5: Retry, 9: an exception, 13: dead letter
            i = d.event.payload["i"]
            attempts[i].append(d.attempt)
            in_flight[0] += 1
            most_in_flight[0] = max(most_in_flight[0], in_flight[0])
            try:
                await asyncio.sleep(0)  # lets the other keys' handlers in
                if i == 5 and d.attempt == 1:
                    raise boxline.Retry(after=0.05, reason="not yet")
                if i == 9 and d.attempt == 1:
                    raise ValueError("flaky")
                if i == 13:
                    raise boxline.DeadLetter("order 13 has no customer")
                done.append((d.event.key, i))
            finally:
                in_flight[0] -= 1

        member = boxline.Member(self.client, None, self.subscription, "m1", max_in_flight=2,
                                wait_millis=500)
        running = Running(member, handle)
        try:
            wait_until(lambda: len(done) == 39, 30,
                       lambda: "39 events done, not %d: %s" % (len(done), sorted(done)))
            dead = wait_until(lambda: self.client.dead_letters(self.subscription), 10,
                              "a dead letter")
        finally:
            running.stop()
        self.assertEqual(sorted(i for _, i in done), [i for i in range(40) if i != 13])
        for key in {k for k, _ in done}:
            order = [i for k, i in done if k == key]
            self.assertEqual(order, sorted(order), "order of %s" % key)
        self.assertEqual(attempts[5], [1, 2], "Retry: tried again")
        self.assertEqual(attempts[9], [1, 2], "an exception: tried again by the server's policy")
        self.assertEqual(attempts[13], [1], "DeadLetter: not tried again")
        self.assertEqual([d.event.payload["i"] for d in dead], [13])
        self.assertIn("order 13 has no customer", dead[0].last_error)
        self.assertLessEqual(most_in_flight[0], 2, "max_in_flight holds")
        self.assertNotIn("m1", member_ids(self.client, self.subscription), "it left the group")
        self.assertEqual(self.client.lag(self.subscription).lag, 0)

    def test_a_settle_after_the_partition_moved_is_refused_and_the_member_goes_on(self):
        self.client.delete_subscription(self.subscription)
        topic = self.client.create_topic(unique("pytest/fence"), partitions=1).name
        sub = self.client.create_subscription(unique("pytest-fence"), [topic]).name
        ids = [r.id for r in self.client.publish_batch(topic, [
            {"type": "T", "key": "k%d" % (i % 3), "payload": {"i": i}} for i in range(10)]).results]
        handled = []
        first_started, moved = threading.Event(), threading.Event()

        def handle(d):  # a sync handler: it runs in a worker thread and may block
            if not first_started.is_set():
                first_started.set()
                moved.wait(30)  # held while the test moves the partition to another member
            handled.append(d.event.id)

        member = boxline.Member(self.client, None, sub, "m1", max_in_flight=1, wait_millis=300)
        running = Running(member, handle)
        try:
            self.assertTrue(first_started.wait(30), "m1 got events")
            # m1 is taken out of the group and "other" takes the partition, under a new epoch.
            self.client.leave(sub, "m1")
            taken = self.client.fetch(sub, "other", max=100)
            self.assertEqual(taken.partitions, [boxline.PartitionRef(topic, 0)])
            self.assertEqual(len(taken.events), 10, "what m1 did not settle goes to the new owner")
            moved.set()
            wait_until(lambda: member.conflicts >= 1, 20, "m1's settle was refused with 409")
            # The other member stops without settling: its events come back to m1.
            self.client.leave(sub, "other")
            wait_until(lambda: handled.count(ids[0]) >= 2 and self.client.lag(sub).lag == 0, 30,
                       lambda: "m1 got the partition back and settled everything (first event "
                       "handled %d times)" % handled.count(ids[0]))
            # The other member's ack ids are fenced now that m1 holds the partition again.
            with self.assertRaises(boxline.Conflict) as refused:
                self.client.settle(sub, "other", [boxline.Settlement(ack_id=d.ack_id, outcome="done")
                                                  for d in taken.events])
            self.assertEqual(refused.exception.refused, [boxline.PartitionRef(topic, 0)])
        finally:
            moved.set()
            running.stop()
        self.assertEqual(set(handled), set(ids))

    def test_when_a_member_process_is_killed_the_survivor_handles_every_event_in_key_order(self):
        n = 800  # several seconds of work for one member, so the kill comes mid-run
        topic = self.client.create_topic(unique("pytest/kill"), partitions=4).name
        self.subscription = self.client.create_subscription(unique("pytest-kill"), [topic]).name
        for start in range(0, n, 400):
            self.client.publish_batch(topic, [
                {"type": "Counted", "key": "key-%d" % (i % 12), "payload": {"i": i}}
                for i in range(start, start + 400)])
        work = tempfile.mkdtemp(prefix="boxline-kill-")
        names = ("m-a", "m-b")
        files = {m: os.path.join(work, m + ".txt") for m in names}
        logs = {m: open(os.path.join(work, m + ".log"), "w+") for m in names}
        procs = {m: subprocess.Popen(
            [sys.executable, os.path.join(HERE, "member_proc.py"), URL, TOKEN, self.subscription,
             m, files[m]], stdout=logs[m], stderr=subprocess.STDOUT) for m in names}

        def output(m):
            logs[m].flush()
            with open(logs[m].name) as f:
                return "%s's output:\n%s" % (m, f.read())

        def lines(m):
            if not os.path.exists(files[m]):
                return []
            with open(files[m]) as f:
                return [l.split() for l in f.read().splitlines() if l.count(" ") == 2]

        def handled():
            return {(k, int(i)) for m in names for k, i, _ in lines(m)}

        try:
            wait_until(lambda: sorted(member_ids(self.client, self.subscription)) == list(names),
                       30, lambda: "both processes joined the group\n%s\n%s"
                       % (output(names[0]), output(names[1])))
            # The member that is handling events is killed: the other must take its partitions
            # once its deadline has passed, and handle what it had not settled.
            busy = wait_until(lambda: next((m for m in names if len(lines(m)) >= 20), None), 30,
                              lambda: "a member handles events\n%s\n%s"
                              % (output(names[0]), output(names[1])))
            victim, survivor = busy, [m for m in names if m != busy][0]
            procs[victim].kill()
            procs[victim].wait(10)
            at_kill = len(handled())
            self.assertLess(at_kill, n, "the victim was killed before the end of the run")
            wait_until(lambda: len(handled()) == n, 60,
                       lambda: "every event handled after the kill, not %d of %d\n%s"
                       % (len(handled()), n, output(survivor)))
            procs[survivor].send_signal(signal.SIGTERM)
            procs[survivor].wait(30)
            out = output(survivor)
            self.assertEqual(procs[survivor].returncode, 0, "SIGTERM: a clean exit\n" + out)
            self.assertIn("member %s handled" % survivor, out)
        finally:
            for p in procs.values():
                if p.poll() is None:
                    p.kill()
                    p.wait(10)
            for f in logs.values():
                f.close()
        self.assertEqual(handled(), {("key-%d" % (i % 12), i) for i in range(n)})
        self.assertGreater(len(lines(victim)), 0)
        self.assertGreater(len(lines(survivor)), 0, "the survivor handled the rest")
        # Per process and key, each event is first handled after the key's earlier ones (an
        # event that comes again after a kill or a 409 repeats one already handled).
        for m in names:
            firsts = defaultdict(list)
            seen = set()
            for k, i, _ in lines(m):
                if (k, i) not in seen:
                    seen.add((k, i))
                    firsts[k].append(int(i))
            for k, order in firsts.items():
                self.assertEqual(order, sorted(order), "%s handled %s out of order" % (m, k))
        self.assertNotIn(survivor, member_ids(self.client, self.subscription),
                         "the survivor left the group on SIGTERM")
        shutil.rmtree(work)


if __name__ == "__main__":
    unittest.main()
