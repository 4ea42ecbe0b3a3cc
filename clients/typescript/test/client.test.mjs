// Client tests: publishing and reading back, tail resume after a cut connection, HTTP details.
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { after, before, describe, test } from "node:test";
import {
  BadRequest, BoxlineError, Client, NetworkError, NotFound, Unauthorized, Unavailable,
} from "@boxline/client";
import { TOKEN, URL, serverTest, unique, waitUntil } from "./support.mjs";

const seg = encodeURIComponent;

describe("publish", serverTest(), () => {
  let client;
  let topic;

  before(async () => {
    client = new Client(URL, TOKEN);
    topic = (await client.createTopic(unique("tstest/publish"), { partitions: 2 })).name;
  });

  /** The partition's events once `count` are there: the sequencer places them just after the publish is answered. */
  function readBack(partition, count) {
    return waitUntil(async () => {
      const answer = await client.request("GET", `/v1/topics/${seg(topic)}/partitions/${partition}/events`);
      return answer.events.length >= count ? answer.events : null;
    }, 20, `${count} events in partition ${partition}`);
  }

  test("one event is stored as sent and its idempotency key makes a resend a duplicate", async () => {
    const first = await client.publish(topic, { orderId: 7, total: "99.50" }, {
      key: "order-7", type: "OrderPlaced", headers: { tenant: "acme" }, idempotencyKey: "order-7-placed",
    });
    assert.equal(first.duplicate, false);
    assert.equal(typeof first.id, "string");
    const again = await client.publish(topic, { orderId: 7, total: "99.50" },
      { key: "order-7", type: "OrderPlaced", idempotencyKey: "order-7-placed" });
    assert.equal(again.duplicate, true);
    assert.equal(again.id, first.id);
    const events = await readBack(first.partition, 1);
    assert.equal(events.length, 1, "the duplicate is not stored again");
    const e = events[0];
    assert.deepEqual([e.id, e.key, e.type, e.topic], [first.id, "order-7", "OrderPlaced", topic]);
    assert.deepEqual(e.payload, { orderId: 7, total: "99.50" });
    assert.deepEqual(e.headers, { tenant: "acme" });
    assert.equal(e.sequence, 1);
  });

  test("a batch is stored in order, all or nothing, with one result per event", async () => {
    const events = Array.from({ length: 5 }, (_, i) => ({ type: "Counted", key: "k", payload: { i } }));
    events.push({ type: "Blob", key: "k", payload: new Uint8Array([0, 1, 2]) });
    const result = await client.publishBatch(topic, events);
    assert.equal(result.topic, topic);
    assert.equal(result.results.length, 6);
    assert.equal(new Set(result.results.map((r) => r.partition)).size, 1, "one key, one partition");
    const stored = await readBack(result.results[0].partition, 6);
    assert.deepEqual(stored.map((e) => e.id), result.results.map((r) => r.id));
    assert.deepEqual(stored.slice(0, 5).map((e) => e.payload), [0, 1, 2, 3, 4].map((i) => ({ i })));
    assert.equal(stored[5].payloadBase64, "AAEC");
    assert.equal(stored[5].contentType, "application/octet-stream");
    assert.deepEqual(stored.map((e) => e.sequence), [1, 2, 3, 4, 5, 6]);
    // All or nothing: a batch with one bad event stores none of its events.
    const lagBefore = (await client.request("GET", `/v1/topics/${seg(topic)}/partitions/${stored[0].partition}/events`)).events.length;
    await assert.rejects(client.publishBatch(topic, [{ type: "Counted", key: "k", payload: { i: 99 } }, { key: "k" }]),
      BadRequest);
    const after = (await client.request("GET", `/v1/topics/${seg(topic)}/partitions/${stored[0].partition}/events`)).events.length;
    assert.equal(after, lagBefore, "nothing of the refused batch is stored");
  });

  test("errors come as their classes, with the status, the server's code and message", async () => {
    const missing = unique("tstest/missing");
    await assert.rejects(client.publish(missing, {}, { type: "T" }), (e) => {
      assert.ok(e instanceof NotFound && e instanceof BoxlineError && e instanceof Error);
      assert.equal(e.status, 404);
      assert.equal(e.error, "not_found");
      assert.match(e.message, new RegExp(missing));
      return true;
    });
    await assert.rejects(client.publishBatch(topic, [{ type: "T", kye: "typo" }]), (e) => {
      assert.ok(e instanceof BadRequest);
      assert.match(e.message, /kye/);
      return true;
    });
    await assert.rejects(new Client(URL, "not-a-token-of-this-server").whoami(), Unauthorized);
    await assert.rejects(client.publish(topic, {}, {}), TypeError);
  });
});

/** A TCP proxy to the server whose connections the test can cut, as a network would. */
class Proxy {
  constructor(target) {
    const url = new globalThis.URL(target);
    this.accepted = 0;
    this.sockets = new Set();
    this.server = net.createServer((client) => {
      this.accepted++;
      const upstream = net.connect(Number(url.port), url.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("error", () => {});
        s.on("close", () => this.sockets.delete(s));
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  async listen() {
    await new Promise((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${this.server.address().port}`;
  }

  cut() {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  close() {
    this.cut();
    this.server.close();
  }
}

describe("tail", serverTest(), () => {
  test("a tail resumes after its connection is cut and sees every event once, in order", async () => {
    const client = new Client(URL, TOKEN);
    const topic = (await client.createTopic(unique("tstest/tail"), { partitions: 3 })).name;
    const batch = (from, to) => Array.from({ length: to - from }, (_, n) => ({
      type: "Counted", key: `key-${(from + n) % 6}`, payload: { i: from + n },
    }));
    const published = [];
    for (let n = 0; n < 3; n++) {
      published.push(...(await client.publishBatch(topic, batch(n * 20, n * 20 + 20))).results.map((r) => r.id));
    }
    const proxy = new Proxy(URL);
    await proxy.listen();
    // The tail waits for events; the signal bounds the test if some are missing.
    const tail = new Client(proxy.url, TOKEN).tail(topic, { from: "earliest", signal: AbortSignal.timeout(60_000) });
    const seen = [];
    const positions = [];
    try {
      for await (const event of tail) {
        seen.push(event);
        positions.push(tail.position);
        if (seen.length === 25) {
          proxy.cut(); // mid-stream: the next read finds the connection gone
          // Events published while it is away come too, after the resume.
          published.push(...(await client.publishBatch(topic, batch(60, 80))).results.map((r) => r.id));
        }
        if (seen.length === 80) break;
      }
    } finally {
      tail.close();
      proxy.close();
    }
    const ids = seen.map((e) => e.id);
    assert.equal(ids.length, 80, `events within 60 s (the tail was closed): ${ids.length}`);
    assert.equal(new Set(ids).size, 80, "no event twice");
    assert.deepEqual(new Set(ids), new Set(published), "every published event");
    assert.ok(proxy.accepted >= 2, "the tail reconnected after the cut");
    assert.ok(tail.connections >= 2);
    for (const key of new Set(seen.map((e) => e.key))) {
      const order = seen.filter((e) => e.key === key).map((e) => e.payload.i);
      assert.deepEqual(order, [...order].sort((a, b) => a - b), `order of ${key}`);
    }
    for (let p = 0; p < 3; p++) {
      const seqs = seen.filter((e) => e.partition === p).map((e) => e.sequence);
      assert.deepEqual(seqs, seqs.map((_, i) => i + 1), `partition ${p} in order`);
    }
    assert.ok(positions.at(-1).includes(`${seen.at(-1).partition}:`), positions.at(-1));

    // A later tail started from the position goes on after the last event given, and gives no other.
    const saved = tail.position;
    const more = (await client.publishBatch(topic, batch(80, 85))).results.map((r) => r.id);
    const resumed = client.tail(topic, { position: saved, signal: AbortSignal.timeout(30_000) });
    const next = [];
    for await (const event of resumed) {
      next.push(event.id);
      if (next.length === 5) break;
    }
    assert.deepEqual(new Set(next), new Set(more), "exactly the events published after the position");
    assert.equal(resumed.connections, 1);
  });

  test("a tail of a topic that does not exist fails with NotFound", async () => {
    const tail = new Client(URL, TOKEN).tail(unique("tstest/none"));
    await assert.rejects(tail.next(), NotFound);
  });
});

describe("HTTP details", () => {
  // Against a small local HTTP server that answers as Boxline does, to see what goes over the wire:
  // the headers, keep-alive, a 503 with Retry-After, timeouts and aborts.
  let server;
  let base;
  const state = { requests: [], ports: new Set(), unavailable: 0, hang: false };

  before(async () => {
    server = http.createServer((req, res) => {
      state.requests.push(req.headers);
      state.ports.add(req.socket.remotePort);
      if (state.hang) return; // never answers
      const answer = (status, body, headers = {}) => {
        const data = JSON.stringify(body);
        res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(data), ...headers });
        res.end(data);
      };
      if (state.unavailable > 0) {
        state.unavailable--;
        answer(503, { status: 503, error: "overloaded", message: "busy" }, { "Retry-After": "0" });
      } else {
        answer(200, { name: "admin", role: "admin" });
      }
    });
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${server.address().port}`;
  });

  after(() => {
    server.closeAllConnections();
    server.close();
  });

  function reset() {
    state.requests = [];
    state.ports = new Set();
    state.unavailable = 0;
    state.hang = false;
  }

  test("requests carry the token, user agent and API version over kept-alive connections", async () => {
    reset();
    const client = new Client(base, "secret-token");
    assert.deepEqual(await client.whoami(), { name: "admin", role: "admin" });
    for (let i = 0; i < 5; i++) await client.whoami();
    assert.equal(state.requests.length, 6);
    for (const headers of state.requests) {
      assert.equal(headers["user-agent"], "boxline-typescript/0.1.0");
      assert.equal(headers["authorization"], "Bearer secret-token");
      assert.equal(headers["boxline-api"], "1.0");
    }
    // Node's fetch pools connections: one request right after another may open a second one.
    assert.ok(state.ports.size <= 2, `connections are reused: ${state.ports.size} for 6 requests`);
  });

  test("a 503 with Retry-After is tried again a bounded number of times", async () => {
    reset();
    const client = new Client(base, "secret-token", { retries: 2 });
    state.unavailable = 2;
    assert.equal((await client.whoami()).name, "admin");
    assert.equal(state.requests.length, 3);
    state.unavailable = 10;
    await assert.rejects(client.whoami(), (e) => {
      assert.ok(e instanceof Unavailable);
      assert.equal(e.retryAfter, 0);
      assert.equal(e.error, "overloaded");
      return true;
    });
    assert.equal(state.requests.length, 6, "one try and two retries");
  });

  test("a signal cancels a call, and no answer within the timeout is a NetworkError", async () => {
    reset();
    state.hang = true;
    const client = new Client(base, "secret-token", { timeout: 0.2 });
    const controller = new AbortController();
    const call = client.whoami({ signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(call, { name: "AbortError" });
    await assert.rejects(client.whoami(), (e) => e instanceof NetworkError && /no answer within 0.2 s/.test(e.message));
    await assert.rejects(new Client("http://127.0.0.1:1", "t").whoami(), NetworkError);
    state.hang = false;
  });
});
