// Group member tests: outcomes and order, graceful stop, fencing, and a member process killed mid-run.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { before, describe, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Client, Conflict, DeadLetter, Fenced, Member, Retry } from "@boxline/client";
import { TOKEN, URL, serverTest, unique, waitUntil } from "./support.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
// A timer that does not keep the test process alive once the test is over.
const timeout = (ms) => delay(ms, undefined, { ref: false });

/** A shorter check-in interval than the default 2 s, so that retries and take-overs come sooner. */
async function quickGroup(client, subscription, interval, multiplier) {
  await client.request("PUT", `/v1/subscriptions/${encodeURIComponent(subscription)}/group-policy`,
    { body: { minCheckInInterval: interval, deadlineMultiplier: multiplier } });
}

async function memberIds(client, subscription) {
  const group = await client.group(subscription);
  return group.members.map((m) => m.id.split(":").slice(1).join(":") || m.id);
}

describe("member", serverTest(), () => {
  let client;

  before(() => {
    client = new Client(URL, TOKEN);
  });

  test("outcomes follow the handler, each key is handled in order, and an aborted signal leaves", async () => {
    const topic = (await client.createTopic(unique("tstest/member"), { partitions: 2 })).name;
    const subscription = (await client.createSubscription(unique("tstest-sub"), [topic], { start: "earliest" })).name;
    await client.publishBatch(topic, Array.from({ length: 40 }, (_, i) => ({
      type: "Counted", key: `key-${i % 4}`, payload: { i },
    })));
    // A retry that falls due while the member waits is delivered at its next check-in.
    await quickGroup(client, subscription, "500ms", 3);
    const done = [];
    const attempts = new Map();
    let inFlight = 0;
    let mostInFlight = 0;

    // i 5: Retry thrown, 9: an error, 13: DeadLetter thrown (all of key-1), 18: Retry returned (key-2)
    const handle = async (d) => {
      const i = d.event.payload.i;
      attempts.set(i, [...(attempts.get(i) ?? []), d.attempt]);
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        await delay(1); // lets the other keys' handlers in
        if (i === 5 && d.attempt === 1) throw new Retry(0.05, "not yet");
        if (i === 9 && d.attempt === 1) throw new Error("flaky");
        if (i === 13) throw new DeadLetter("order 13 has no customer");
        if (i === 18 && d.attempt === 1) return new Retry(0.05, "returned, not thrown");
        done.push([d.event.key, i]);
      } finally {
        inFlight--;
      }
    };

    const member = new Member(client, { subscription, memberId: "m1", maxInFlight: 2, waitMillis: 500 });
    const controller = new AbortController();
    const running = member.run(handle, { signal: controller.signal });
    let dead;
    try {
      await waitUntil(() => done.length === 39, 30, () => `39 events done, not ${done.length}: ${JSON.stringify(done)}`);
      dead = await waitUntil(async () => {
        const list = await client.deadLetters(subscription);
        return list.length ? list : null;
      }, 10, "a dead letter");
    } finally {
      controller.abort();
      await running;
    }
    assert.deepEqual(done.map(([, i]) => i).sort((a, b) => a - b),
      Array.from({ length: 40 }, (_, i) => i).filter((i) => i !== 13));
    for (const key of new Set(done.map(([k]) => k))) {
      const order = done.filter(([k]) => k === key).map(([, i]) => i);
      assert.deepEqual(order, [...order].sort((a, b) => a - b), `order of ${key}`);
    }
    assert.deepEqual(attempts.get(5), [1, 2], "Retry: tried again");
    assert.deepEqual(attempts.get(9), [1, 2], "an error: tried again by the server's policy");
    assert.deepEqual(attempts.get(13), [1], "DeadLetter: not tried again");
    assert.deepEqual(attempts.get(18), [1, 2], "a returned Retry: tried again");
    assert.deepEqual(dead.map((d) => d.event.payload.i), [13]);
    assert.match(dead[0].lastError, /order 13 has no customer/);
    assert.ok(mostInFlight <= 2, `maxInFlight holds: ${mostInFlight}`);
    assert.equal(member.handled, 39);
    assert.ok(!(await memberIds(client, subscription)).includes("m1"), "it left the group");
    assert.equal((await client.lag(subscription)).lag, 0);
  });

  test("a settle with ack ids from before the group moved on is fenced, and the member goes on", async () => {
    const topic = (await client.createTopic(unique("tstest/fence"), { partitions: 1 })).name;
    const sub = (await client.createSubscription(unique("tstest-fence"), [topic])).name;
    const ids = (await client.publishBatch(topic, Array.from({ length: 10 }, (_, i) => ({
      type: "T", key: `k${i % 3}`, payload: { i },
    })))).results.map((r) => r.id);
    const handled = [];
    let firstStarted = false;
    let release;
    const moved = new Promise((resolve) => {
      release = resolve;
    });

    const member = new Member(client, { subscription: sub, memberId: "m1", maxInFlight: 1, waitMillis: 300 });
    const running = member.run(async (d) => {
      if (!firstStarted) {
        firstStarted = true;
        await Promise.race([moved, timeout(30_000)]); // held while the test moves the partition to another member
      }
      handled.push(d.event.id);
    });
    let taken;
    try {
      await waitUntil(() => firstStarted, 30, "m1 got events");
      // m1 is taken out of the group and "other" takes the partition, under a new epoch.
      await client.leave(sub, "m1");
      taken = await client.fetch(sub, "other", { max: 100 });
      assert.deepEqual(taken.partitions, [{ topic, partition: 0 }]);
      assert.equal(taken.events.length, 10, "what m1 did not settle goes to the new owner");
      release();
      await waitUntil(() => member.conflicts >= 1, 20, "m1's settle was refused with 409");
      // The other member stops without settling: its events come back to m1.
      await client.leave(sub, "other");
      await waitUntil(async () => handled.filter((id) => id === ids[0]).length >= 2 && (await client.lag(sub)).lag === 0,
        30, () => `m1 got the partition back and settled everything (first event handled `
          + `${handled.filter((id) => id === ids[0]).length} times)`);
      // The other member's ack ids are fenced now that m1 holds the partition again.
      await assert.rejects(
        client.settle(sub, "other", taken.events.map((d) => ({ ackId: d.ackId, outcome: "done" }))),
        (e) => {
          assert.ok(e instanceof Fenced && e instanceof Conflict, String(e));
          assert.equal(e.status, 409);
          assert.equal(e.error, "conflict");
          assert.deepEqual(e.refused, [{ topic, partition: 0 }]);
          return true;
        });
    } finally {
      release();
      member.stop();
      await running;
    }
    assert.deepEqual(new Set(handled), new Set(ids));
  });

  test("when a member process is killed, the survivor handles every event in key order", async () => {
    const n = 800; // several seconds of work for one member, so the kill comes mid-run
    const topic = (await client.createTopic(unique("tstest/kill"), { partitions: 4 })).name;
    const subscription = (await client.createSubscription(unique("tstest-kill"), [topic])).name;
    // The victim's partitions move on after the group's deadline: 1 s × 2 rather than the default 2 s × 3.
    await quickGroup(client, subscription, "1s", 2);
    for (let start = 0; start < n; start += 400) {
      await client.publishBatch(topic, Array.from({ length: 400 }, (_, k) => ({
        type: "Counted", key: `key-${(start + k) % 12}`, payload: { i: start + k },
      })));
    }
    const work = mkdtempSync(join(tmpdir(), "boxline-kill-"));
    const names = ["m-a", "m-b"];
    const files = Object.fromEntries(names.map((m) => [m, join(work, `${m}.txt`)]));
    const logs = Object.fromEntries(names.map((m) => [m, []]));
    const procs = Object.fromEntries(names.map((m) => {
      const p = spawn(process.execPath, [join(HERE, "member-proc.mjs"), URL, TOKEN, subscription, m, files[m]],
        { stdio: ["ignore", "pipe", "pipe"] });
      p.stdout.on("data", (b) => logs[m].push(b.toString()));
      p.stderr.on("data", (b) => logs[m].push(b.toString()));
      p.exited = new Promise((resolve) => p.on("exit", (code, signal) => resolve({ code, signal })));
      return [m, p];
    }));
    const output = (m) => `${m}'s output:\n${logs[m].join("")}`;
    const lines = (m) => existsSync(files[m])
      ? readFileSync(files[m], "utf8").split("\n").map((l) => l.split(" ")).filter((p) => p.length === 3)
      : [];
    const handled = () => new Set(names.flatMap((m) => lines(m).map(([k, i]) => `${k} ${i}`)));
    const bounded = (promise, seconds, what) => Promise.race([promise,
      timeout(seconds * 1000).then(() => { throw new Error(`within ${seconds} s: ${what}`); })]);
    let victim;
    let survivor;
    try {
      await waitUntil(async () => JSON.stringify((await memberIds(client, subscription)).sort()) === JSON.stringify(names),
        30, () => `both processes joined the group\n${output(names[0])}\n${output(names[1])}`);
      // The member that is handling events is killed: the other must take its partitions once its
      // deadline has passed, and handle what it had not settled.
      victim = await waitUntil(() => names.find((m) => lines(m).length >= 20), 30,
        () => `a member handles events\n${output(names[0])}\n${output(names[1])}`);
      survivor = names.find((m) => m !== victim);
      procs[victim].kill("SIGKILL");
      assert.equal((await bounded(procs[victim].exited, 10, "the victim exits")).signal, "SIGKILL");
      assert.ok(handled().size < n, "the victim was killed before the end of the run");
      await waitUntil(() => handled().size === n, 60,
        () => `every event handled after the kill, not ${handled().size} of ${n}\n${output(survivor)}`);
      procs[survivor].kill("SIGTERM");
      const exit = await bounded(procs[survivor].exited, 30, "the survivor exits on SIGTERM");
      assert.equal(exit.code, 0, `SIGTERM: a clean exit\n${output(survivor)}`);
      assert.match(output(survivor), new RegExp(`member ${survivor} handled`));
    } finally {
      for (const p of Object.values(procs)) {
        if (p.exitCode === null && p.signalCode === null) {
          p.kill("SIGKILL");
          await bounded(p.exited, 10, "a member process exits").catch(() => {});
        }
      }
    }
    const expected = new Set(Array.from({ length: n }, (_, i) => `key-${i % 12} ${i}`));
    assert.deepEqual(handled(), expected, "nothing lost");
    assert.ok(lines(victim).length > 0);
    assert.ok(lines(survivor).length > 0, "the survivor handled the rest");
    // Per process and key, each event is first handled after the key's earlier ones (an event that
    // comes again after a kill or a 409 repeats one already handled).
    for (const m of names) {
      const firsts = new Map();
      const seen = new Set();
      for (const [k, i] of lines(m)) {
        if (seen.has(`${k} ${i}`)) continue;
        seen.add(`${k} ${i}`);
        firsts.set(k, [...(firsts.get(k) ?? []), Number(i)]);
      }
      for (const [k, order] of firsts) {
        assert.deepEqual(order, [...order].sort((a, b) => a - b), `${m} handled ${k} out of order`);
      }
    }
    assert.ok(!(await memberIds(client, subscription)).includes(survivor), "the survivor left the group on SIGTERM");
    rmSync(work, { recursive: true, force: true });
  });
});

describe("member options", () => {
  test("a member needs a subscription, an id and, with a URL, a token", () => {
    assert.throws(() => new Member("http://127.0.0.1:1", { subscription: "s", memberId: "m" }), TypeError);
    assert.throws(() => new Member(new Client("http://127.0.0.1:1", "t"), { subscription: "", memberId: "m" }), TypeError);
    const m = new Member("http://127.0.0.1:1", { token: "t", subscription: "s", memberId: "m" });
    assert.equal(m.maxInFlight, 16);
    assert.equal(m.waitMillis, 10000);
    assert.equal(m.maxEvents, 100);
    assert.equal(m.handleSignals, false);
  });
});


