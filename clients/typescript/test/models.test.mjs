// Unit tests without a server: generated models, errors, the SSE parser, the package itself.
import assert from "node:assert/strict";
import { readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as boxline from "@boxline/client";
import {
  API_VERSION, BadRequest, BoxlineError, Conflict, DeadLetter, Fenced, Forbidden, NotFound, Retry, SseParser,
  USER_AGENT, Unauthorized, Unavailable, VERSION, errorFor,
} from "@boxline/client";

// The package as Node resolved it (through node_modules when installed), its symbolic links followed.
const PACKAGE_DIR = dirname(dirname(realpathSync(fileURLToPath(import.meta.resolve("@boxline/client")))));

describe("generated models", () => {
  test("src/models.ts is what openapi.json generates", async () => {
    const generator = await import(pathToFileURL(join(PACKAGE_DIR, "tools", "generate-models.mjs")).href);
    const expected = generator.render();
    assert.ok(readFileSync(generator.TARGET, "utf8") === expected,
      `${generator.TARGET} differs from what openapi.json generates: run node clients/typescript/tools/generate-models.mjs`);
    assert.equal(generator.TARGET, join(PACKAGE_DIR, "src", "models.ts"));
    // Each interface the client returns is there, with the wire's field names.
    for (const name of ["Batch", "Delivery", "Event", "PartitionRef", "PublishResult", "Published", "Settlement",
      "SubscriptionLag", "DeadLetter", "Error", "OutgoingEvent", "Topic", "Subscription", "Caller"]) {
      assert.match(expected, new RegExp(`export interface ${name} \\{`), name);
    }
    assert.match(expected, /readonly ackId: string;/);
    assert.match(expected, /readonly checkInWithinMillis: number;/);
    assert.match(expected, /outcome: "done" \| "retry" \| "dead";/, "a request's enum is strict");
    assert.match(expected, /readonly key: string \| null;/, "nullable and required");
    assert.match(expected, /idempotencyKey\?: string;/, "optional");
  });

  test("the compiled declarations carry the models", () => {
    const dts = readFileSync(join(PACKAGE_DIR, "dist", "models.d.ts"), "utf8");
    assert.match(dts, /export interface Delivery \{/);
    const index = readFileSync(join(PACKAGE_DIR, "dist", "index.d.ts"), "utf8");
    assert.match(index, /DeadLetter as DeadLetterRecord/);
  });
});

describe("errors", () => {
  test("each status has its class and carries the status, the server's code and message", () => {
    for (const [status, cls] of [[400, BadRequest], [401, Unauthorized], [403, Forbidden], [404, NotFound],
      [409, Conflict], [503, Unavailable]]) {
      const err = errorFor(status, { status, error: "x", message: "m" });
      assert.ok(err instanceof cls, `${status}`);
      assert.ok(err instanceof BoxlineError && err instanceof Error);
      assert.deepEqual([err.status, err.error, err.message, err.name], [status, "x", "m", cls.name]);
      assert.equal(String(err), `${cls.name}: ${status} x: m`);
    }
    assert.ok(!(errorFor(409, { error: "conflict", message: "maxMembers" }) instanceof Fenced),
      "a 409 without refused partitions is not fencing");
    const fenced = errorFor(409, { status: 409, error: "conflict", message: "moved", settled: 12,
      refused: [{ topic: "a/b", partition: 3 }] });
    assert.ok(fenced instanceof Fenced && fenced instanceof Conflict);
    assert.deepEqual(fenced.refused, [{ topic: "a/b", partition: 3 }]);
    assert.equal(fenced.settled, 12);
    const other = errorFor(500, { message: "boom", correlationId: "r1" });
    assert.equal(other.constructor, BoxlineError);
    assert.equal(other.error, "http_500");
    assert.equal(other.body.correlationId, "r1");
    assert.equal(errorFor(503, { error: "overloaded", message: "busy" }, 1).retryAfter, 1);
  });

  test("the handler's decisions are errors with their fields", () => {
    const retry = new Retry(1.5, "later");
    assert.ok(retry instanceof Error);
    assert.deepEqual([retry.after, retry.reason, retry.message], [1.5, "later", "later"]);
    assert.deepEqual([new Retry().after, new Retry().reason], [null, "retry requested"]);
    const dead = new DeadLetter("poison");
    assert.ok(dead instanceof Error);
    assert.equal(dead.reason, "poison");
  });
});

describe("SSE parser", () => {
  test("joins data lines, skips comments, takes retry, and copes with any chunking", () => {
    const stream = "retry: 2500\n\n: keep-alive\n\n"
      + "id: 0:1\nevent: event\ndata: {\"a\":\ndata: 1}\n\n"
      + "id: 0:1,1:4\r\nevent: event\r\ndata: 2\r\n\r\n";
    const expected = [{ id: "0:1", event: "event", data: "{\"a\":\n1}" }, { id: "0:1,1:4", event: "event", data: "2" }];
    const whole = new SseParser();
    assert.deepEqual(whole.push(stream), expected);
    assert.equal(whole.retryMs, 2500);
    for (let size = 1; size < 8; size++) {
      const parser = new SseParser();
      const got = [];
      for (let i = 0; i < stream.length; i += size) got.push(...parser.push(stream.slice(i, i + size)));
      assert.deepEqual(got, expected, `chunks of ${size}`);
    }
  });
});

describe("the package", () => {
  test("names its version, user agent and API version", () => {
    assert.equal(VERSION, "0.1.0");
    assert.equal(USER_AGENT, "boxline-typescript/0.1.0");
    assert.equal(API_VERSION, "1.0");
    const pkg = JSON.parse(readFileSync(join(PACKAGE_DIR, "package.json"), "utf8"));
    assert.equal(pkg.name, "@boxline/client");
    assert.equal(pkg.version, VERSION);
    assert.deepEqual(pkg.dependencies ?? {}, {}, "no runtime dependency");
    for (const name of ["Client", "Tail", "Member", "Retry", "DeadLetter", "BoxlineError", "Fenced", "NetworkError"]) {
      assert.equal(typeof boxline[name], "function", name);
    }
  });

  test("the package under test is the installed one", { skip: !process.env.BOXLINE_EXPECT_PACKAGE_DIR && "not run by TypeScriptClientIT" }, () => {
    // TypeScriptClientIT installs the package into a consumer directory, runs this suite from there and
    // names node_modules/@boxline/client: "@boxline/client" resolves through it (npm links a folder).
    assert.equal(PACKAGE_DIR, realpathSync(process.env.BOXLINE_EXPECT_PACKAGE_DIR));
    assert.ok(!fileURLToPath(import.meta.url).startsWith(PACKAGE_DIR + "/"), "this suite is not the package's own copy");
  });
});
