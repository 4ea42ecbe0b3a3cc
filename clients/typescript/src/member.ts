// A member of a subscription's consumer group: fetch, handle, settle, leave.
import { Client, type CallOptions } from "./client.js";
import { BadRequest, BoxlineError, Conflict, Fenced, NetworkError, Unavailable } from "./errors.js";
import type { Batch, Delivery, Settlement } from "./models.js";

/**
 * The handler's decision to try the event again after `after` seconds (null: the subscription's
 * backoff). Thrown or returned by a handler. The key's later events wait behind it, so the key's order
 * holds.
 */
export class Retry extends Error {
  readonly after: number | null;
  readonly reason: string;

  constructor(after: number | null = null, reason = "retry requested") {
    super(reason);
    this.name = "Retry";
    this.after = after;
    this.reason = reason;
  }
}

/**
 * The handler's decision that the event can never succeed: dead-letter it with this reason. Thrown or
 * returned by a handler. (The dead-letter record the server lists is the model `DeadLetterRecord`.)
 */
export class DeadLetter extends Error {
  readonly reason: string;

  constructor(reason: string) {
    super(reason);
    this.name = "DeadLetter";
    this.reason = reason;
  }
}

/**
 * Handles one delivery. Returning (or resolving) settles it `done`; throwing or returning a Retry or
 * DeadLetter settles it `retry` or `dead`; any other error is a `retry` under the subscription's retry
 * policy.
 */
export type Handler = (delivery: Delivery) => unknown;

/** Where the member writes what happens; `console` by default, without `info`. */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface MemberOptions {
  /** The token, when the member is made with a URL rather than a Client. */
  token?: string;
  subscription: string;
  /** This process's id in the group: 1 to 100 of `A-Z a-z 0-9 . _ : -`, such as host name and pid. */
  memberId: string;
  /** At most this many handlers run at once (16). */
  maxInFlight?: number;
  /** The fetch's long poll, in milliseconds (10000). */
  waitMillis?: number;
  /** At most this many events per fetch (100). */
  maxEvents?: number;
  /** The member's weight in the group's fair share (the server's default: 1). */
  weight?: number;
  /** Stop gracefully on SIGINT and SIGTERM while `run()` runs (false). */
  handleSignals?: boolean;
  logger?: Logger;
}

const DEFAULT_LOGGER: Logger = {
  info: () => {},
  warn: (m) => console.warn(m),
  error: (m) => console.error(m),
};

/** Bounds how many handlers run at once. */
class Semaphore {
  private waiting: Array<() => void> = [];
  constructor(private free: number) {}

  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

const STOPPED = Symbol("stopped");

/**
 * A member of `subscription`'s group. `await member.run(handler)` loops until stopped.
 *
 * The handler gets each Delivery (`.event`, `.attempt`). Events of one key are handled one after
 * another, in order; different keys run concurrently, at most `maxInFlight` at a time. The next
 * fetch waits for the batch (backpressure), and carries the batch's settlement (one request per
 * batch). A handler should not block the event loop: make it async.
 *
 * `stop()`, the `signal` given to `run()`, or SIGINT/SIGTERM with `handleSignals` end the loop
 * gracefully: handlers in progress finish, what is handled is settled, then the member leaves the
 * group so the others take its partitions at once.
 */
export class Member {
  readonly client: Client;
  readonly subscription: string;
  readonly memberId: string;
  maxInFlight: number;
  waitMillis: number;
  maxEvents: number;
  weight: number | undefined;
  handleSignals: boolean;
  logger: Logger;
  /** Events handled `done`, for logs and tests. */
  handled = 0;
  /** 409 answers: settlements refused because the group moved on, or the group did not admit the member. */
  conflicts = 0;
  /** Batches with events. */
  batches = 0;
  private stopRequested = false;
  private stopping: Promise<typeof STOPPED> | null = null;
  private wakeStop: (() => void) | null = null;
  private left = false;
  private running = false;

  constructor(clientOrUrl: Client | string, options: MemberOptions) {
    if (clientOrUrl instanceof Client) {
      this.client = clientOrUrl;
    } else {
      if (!options?.token) throw new TypeError("a token is needed with a URL");
      this.client = new Client(clientOrUrl, options.token);
    }
    if (!options?.subscription || !options.memberId) throw new TypeError("subscription and memberId are required");
    this.subscription = options.subscription;
    this.memberId = options.memberId;
    this.maxInFlight = options.maxInFlight ?? 16;
    this.waitMillis = options.waitMillis ?? 10000;
    this.maxEvents = options.maxEvents ?? 100;
    this.weight = options.weight;
    this.handleSignals = options.handleSignals ?? false;
    this.logger = options.logger ?? DEFAULT_LOGGER;
  }

  /** Asks the loop to settle, leave and return. Safe from a handler and before `run()`. */
  stop(): void {
    this.stopRequested = true;
    this.wakeStop?.();
  }

  /** True once stop() was called (or the signal aborted). */
  get stopped(): boolean {
    return this.stopRequested;
  }

  /** Fetches, handles and settles until stopped; then settles what is handled and leaves the group. */
  async run(handler: Handler, options: CallOptions = {}): Promise<void> {
    if (this.running) throw new Error("this member is running already");
    this.running = true;
    this.left = false;
    this.stopping = new Promise((resolve) => {
      this.wakeStop = () => resolve(STOPPED);
    });
    if (this.stopRequested) this.wakeStop!();
    const onAbort = () => this.stop();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) this.stop();
    const onSignal = () => this.stop();
    if (this.handleSignals) {
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
    }
    let pending: Settlement[] = [];
    let failures = 0;
    try {
      while (!this.stopRequested) {
        let batch: Batch | null;
        try {
          batch = await this.fetchNext(pending);
          failures = 0;
        } catch (e) {
          if (e instanceof Fenced) {
            // Fencing: those partitions moved to another member, which gets their events again.
            // Nothing to keep; fetch again.
            this.conflicts++;
            this.logger.info(`member ${this.memberId}: settle refused for ${JSON.stringify(e.refused)}; fetching again`);
            pending = [];
            continue;
          }
          if (e instanceof Conflict) {
            this.conflicts++;
            failures++; // the group's maxMembers does not admit this member yet
            pending = [];
            await this.pause(failures);
            continue;
          }
          if (e instanceof BadRequest) {
            if (pending.length === 0) throw e; // a bad member id, max or waitMillis: nothing to retry
            // The settlement did not match the fetch (a client bug): its events come again.
            this.logger.error(`member ${this.memberId}: settlement refused, its events come again: ${e.message}`);
            pending = [];
            continue;
          }
          if (e instanceof NetworkError || e instanceof Unavailable) {
            // The answer was lost: the settlement may or may not have been taken; the next fetch
            // shows which, as what was not taken comes again.
            failures++;
            pending = [];
            this.logger.warn(`member ${this.memberId}: fetch failed (${e.message}); trying again`);
            await this.pause(failures);
            continue;
          }
          throw e;
        }
        pending = [];
        if (batch === null) break; // stopped while waiting for events: nothing was handled
        if (batch.events.length > 0) {
          this.batches++;
          pending = await this.handle(batch, handler);
        }
      }
      if (pending.length > 0) {
        try {
          await this.client.settle(this.subscription, this.memberId, pending);
        } catch (e) {
          if (e instanceof Conflict) this.conflicts++; // moved on: the new owner handles them again
          else if (e instanceof NetworkError || e instanceof BoxlineError) {
            this.logger.warn(`member ${this.memberId}: last settle failed (${e.message})`);
          } else throw e;
        }
      }
    } finally {
      await this.leave();
      options.signal?.removeEventListener("abort", onAbort);
      if (this.handleSignals) {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
      }
      this.running = false;
      this.wakeStop = null;
    }
  }

  /** Backs off up to 5 s, but wakes at once on stop(). */
  private async pause(failures: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.stopping,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.min(5000, 100 * 2 ** failures));
      }),
    ]);
    clearTimeout(timer);
  }

  /** The next batch, settling `pending` first; null when stopped during the long poll. */
  private async fetchNext(pending: Settlement[]): Promise<Batch | null> {
    const fetch = this.client.fetch(this.subscription, this.memberId, {
      max: this.maxEvents, waitMillis: this.waitMillis, weight: this.weight, settle: pending,
    });
    const first = await Promise.race([fetch, this.stopping!]);
    if (first !== STOPPED) return first;
    // Leaving ends the long poll at once. Events it may still return are not handled: having left,
    // the member could not settle them, and they go to the next owner.
    await this.leave();
    try {
      await fetch;
    } catch (e) {
      if (!(e instanceof NetworkError || e instanceof BoxlineError)) throw e;
    }
    // The fetch and the leave travel on different connections: a fetch the server read after the
    // leave checked the member in again. Leaving once more, after its answer, ends that too.
    this.left = false;
    await this.leave();
    return null;
  }

  private async leave(): Promise<void> {
    if (this.left) return;
    this.left = true;
    try {
      await this.client.leave(this.subscription, this.memberId);
    } catch (e) {
      if (!(e instanceof NetworkError || e instanceof BoxlineError)) throw e;
      this.logger.warn(`member ${this.memberId}: leave failed (${e.message}); its deadline frees its partitions`);
    }
  }

  /** Handles a batch, each key in order, and returns its settlement. */
  private async handle(batch: Batch, handler: Handler): Promise<Settlement[]> {
    const chains = new Map<unknown, Delivery[]>();
    batch.events.forEach((d, i) => {
      // Keyless events have no order to keep: each is a chain of its own.
      const chainKey = d.event.key !== null && d.event.key !== undefined ? "k:" + d.event.key : i;
      const chain = chains.get(chainKey);
      if (chain) chain.push(d);
      else chains.set(chainKey, [d]);
    });
    const outcomes = new Map<string, Settlement>();
    const behindRetry = new Set<string>();
    const limit = new Semaphore(this.maxInFlight);

    const runChain = async (chain: Delivery[]): Promise<void> => {
      for (let n = 0; n < chain.length; n++) {
        if (this.stopRequested) return; // stopping: the rest of the batch comes again to the next owner
        const d = chain[n]!;
        await limit.acquire();
        let outcome: Settlement;
        try {
          outcome = await this.call(handler, d);
        } finally {
          limit.release();
        }
        outcomes.set(d.ackId, outcome);
        if (outcome.outcome === "retry") {
          // The key's later events are left out: the server parks them behind the retry.
          for (const later of chain.slice(n + 1)) behindRetry.add(later.ackId);
          return;
        }
      }
    };

    await Promise.all([...chains.values()].map(runChain));
    // Per partition the settlement is a run from the first event delivered: it stops at the first
    // event not handled (stopping), as a hole would be refused.
    const settle: Settlement[] = [];
    const cut = new Set<string>();
    for (const d of batch.events) {
      const part = `${d.event.partition}:${d.event.topic}`;
      if (cut.has(part) || behindRetry.has(d.ackId)) continue;
      const outcome = outcomes.get(d.ackId);
      if (outcome === undefined) {
        cut.add(part);
        continue;
      }
      settle.push(outcome);
    }
    return settle;
  }

  private async call(handler: Handler, d: Delivery): Promise<Settlement> {
    let decision: unknown;
    try {
      decision = await handler(d);
    } catch (e) {
      decision = e;
      if (!(e instanceof Retry) && !(e instanceof DeadLetter)) {
        const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
        this.logger.warn(`member ${this.memberId}: handler failed on ${d.event.topic}/${d.event.partition}`
          + ` #${d.event.sequence}: ${what}`);
        return { ackId: d.ackId, outcome: "retry", reason: what.slice(0, 1000) };
      }
    }
    if (decision instanceof Retry) {
      const settlement: Settlement = { ackId: d.ackId, outcome: "retry", reason: decision.reason.slice(0, 1000) };
      if (decision.after !== null) settlement.retryIn = `${Math.max(0, Math.floor(decision.after * 1000))}ms`;
      return settlement;
    }
    if (decision instanceof DeadLetter) {
      return { ackId: d.ackId, outcome: "dead", reason: decision.reason.slice(0, 1000) };
    }
    this.handled++;
    return { ackId: d.ackId, outcome: "done" };
  }
}
