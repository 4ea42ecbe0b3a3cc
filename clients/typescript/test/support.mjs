// What the tests share: the server under test, unique names, bounded waits.
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";

export const URL = process.env.BOXLINE_URL;
export const TOKEN = process.env.BOXLINE_TOKEN;
// TypeScriptClientIT sets this, so that a missing server fails the run rather than skipping its tests.
export const REQUIRED = process.env.BOXLINE_REQUIRE_SERVER === "1";

/**
 * Options for a describe() of tests that need BOXLINE_URL and BOXLINE_TOKEN (an admin token): they
 * are skipped without them, unless BOXLINE_REQUIRE_SERVER=1, which makes the run fail.
 */
export function serverTest() {
  if (URL && TOKEN) return {};
  if (REQUIRED) throw new Error("BOXLINE_URL and BOXLINE_TOKEN must be set (BOXLINE_REQUIRE_SERVER=1)");
  return { skip: "set BOXLINE_URL and BOXLINE_TOKEN to run against a server" };
}

export function unique(prefix) {
  return `${prefix}-${randomUUID().replaceAll("-", "").slice(0, 10)}`;
}

/** Polls `condition` (maybe async) until it is truthy; fails with `what` after `timeout` seconds. */
export async function waitUntil(condition, timeout, what) {
  const deadline = Date.now() + timeout * 1000;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) {
      const text = typeof what === "function" ? await what() : what;
      throw new Error(`within ${timeout} s: ${text}`);
    }
    await delay(50); // a poll interval, not a synchronisation: the condition decides
  }
}
