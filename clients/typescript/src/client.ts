// A client of the Boxline server's HTTP API, on Node's global fetch (keep-alive by default).
import { BoxlineError, NetworkError, Unavailable, errorFor, type ErrorBody } from "./errors.js";
import type {
  Batch, Caller, DeadLetter, Event, FetchRequest, OutgoingEvent, Published, PublishResult, Settlement, Subscription,
  SubscriptionCreate, SubscriptionLag, Topic, TopicCreate,
} from "./models.js";
import { SseParser } from "./sse.js";

export const VERSION = "0.1.0";
export const USER_AGENT = "boxline-typescript/" + VERSION;
/**
 * The version of the server's HTTP API this client is written for: a server that cannot answer it
 * refuses every request with 400 unsupported_version, naming both versions.
 */
export const API_VERSION = "1.0";

/** Every call takes these: an AbortSignal that cancels it (the promise rejects with the signal's reason). */
export interface CallOptions {
  signal?: AbortSignal;
}

export interface ClientOptions {
  /** Seconds to wait for an answer (30). A fetch's long poll waits `waitMillis` longer. */
  timeout?: number;
  /** How often a 503 with Retry-After is tried again (3). */
  retries?: number;
}

export interface RequestOptions extends CallOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Query parameters; undefined and null ones are left out. */
  query?: Record<string, string | number | boolean | null | undefined>;
  /** Seconds to wait for the answer; the client's `timeout` when not given. */
  timeout?: number;
}

/** The fields of an event besides its payload, for `publish`. `type` is required. */
export interface PublishOptions extends CallOptions {
  type: string;
  key?: string;
  headers?: Record<string, string>;
  idempotencyKey?: string;
  id?: string;
  source?: string;
  contentType?: string;
  deliverAt?: string;
}

/** An event for `publishBatch`: an OutgoingEvent, whose `payload` may also be bytes (sent as payloadBase64). */
export type BatchEvent = OutgoingEvent | (Omit<OutgoingEvent, "payload"> & { payload?: unknown });

export interface TailOptions extends CallOptions {
  /** Where to start without a position: `latest` (default) or `earliest`. */
  from?: "latest" | "earliest";
  /** A Tail's `position` from before: go on after the last event it gave. `from` is then ignored. */
  position?: string | null;
  /** Only events with this key. */
  key?: string;
  /** Only events of this type. */
  type?: string;
  /** Seconds without a byte (the server sends a keep-alive every 15 s) before the connection counts as dropped (45). */
  readTimeout?: number;
  /** Connections in a row without an event before the tail gives up with a NetworkError (10). */
  maxReconnects?: number;
}

export interface FetchOptions extends CallOptions {
  max?: number;
  waitMillis?: number;
  weight?: number;
  /** Settled first, in the same request. */
  settle?: Settlement[];
  payload?: FetchRequest["payload"];
}

/** The consumer group as the server shows it: members, partitions, policy. */
export type Group = { readonly [field: string]: unknown };

/** A topic or subscription name is one path segment, its slashes encoded. */
function seg(name: string): string {
  return encodeURIComponent(name);
}

function memberPath(subscription: string, member: string): string {
  return `/v1/subscriptions/${seg(subscription)}/members/${seg(member)}`;
}

function noUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T;
}

function isBytes(v: unknown): v is Uint8Array | ArrayBuffer {
  return v instanceof Uint8Array || v instanceof ArrayBuffer;
}

function base64(v: Uint8Array | ArrayBuffer): string {
  const bytes = v instanceof Uint8Array ? v : new Uint8Array(v);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** An outgoing event on the wire: bytes as payloadBase64, unset fields left out. */
function outgoing(event: BatchEvent): OutgoingEvent {
  const { payload, ...rest } = event as OutgoingEvent;
  const wire: OutgoingEvent = noUndefined(rest);
  if (isBytes(payload)) wire.payloadBase64 = base64(payload);
  else if (payload !== undefined) wire.payload = payload;
  return wire;
}

// A kept-alive connection that the server closed while idle fails with one of these before any
// answer; the request is then sent once more, on a fresh connection.
const STALE = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET"]);

function causeCode(e: unknown): string | undefined {
  const cause = (e as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === "string" ? cause.code : undefined;
}

/** Seconds from a Retry-After header (seconds only; an HTTP date gives null). */
function retryAfterOf(res: Response): number | null {
  const value = res.headers.get("Retry-After");
  if (value === null || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return null;
  return Number(value);
}

function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Rejects with the signal's reason when it aborts; otherwise resolves after `seconds`. */
export function sleep(seconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, seconds * 1000));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Talks to one Boxline server with one token. Every method returns a Promise and takes an optional
 * `{ signal }`.
 *
 * ```ts
 * const client = new Client("http://127.0.0.1:8080", token);
 * await client.publish("acme/orders", { orderId: 7 }, { key: "order-7", type: "OrderPlaced" });
 * ```
 */
export class Client {
  readonly baseUrl: string;
  readonly token: string;
  /** Seconds to wait for an answer. */
  timeout: number;
  /** How often a 503 with Retry-After is tried again. */
  retries: number;

  constructor(baseUrl: string, token: string, options: ClientOptions = {}) {
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new TypeError(`baseUrl must be http://host:port or https://host:port, not ${JSON.stringify(baseUrl)}`);
    }
    if ((url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname) {
      throw new TypeError(`baseUrl must be http://host:port or https://host:port, not ${JSON.stringify(baseUrl)}`);
    }
    if (typeof token !== "string" || !token) throw new TypeError("a token is needed");
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.token = token;
    this.timeout = options.timeout ?? 30;
    this.retries = options.retries ?? 3;
  }

  // -- plumbing ----------------------------------------------------------------------------

  /** The headers of every request: the token, the user agent and the API version, plus `extra`. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return {
      "Authorization": "Bearer " + this.token,
      "User-Agent": USER_AGENT,
      "Boxline-Api": API_VERSION,
      "Accept": "application/json",
      ...extra,
    };
  }

  /**
   * Sends one request and returns the parsed JSON answer (`path` from `/v1/…`). An error answer
   * rejects with a BoxlineError subclass; no answer with a NetworkError.
   */
  async request<T = unknown>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    let url = this.baseUrl + path;
    if (options.query) {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(options.query)) {
        if (v !== undefined && v !== null) query.set(k, String(v));
      }
      const text = query.toString();
      if (text) url += "?" + text;
    }
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers = this.headers(body === undefined ? {} : { "Content-Type": "application/json" });
    const timeout = options.timeout ?? this.timeout;
    for (let attempt = 0; ; attempt++) {
      const { status, text, retryAfter } = await this.send(method, url, headers, body, timeout, options.signal);
      const answer = parseJson(text);
      if (status < 300) return answer as T;
      const errorBody: ErrorBody = answer !== null && typeof answer === "object" && !Array.isArray(answer)
        ? answer as ErrorBody : { message: text.slice(0, 200) };
      const err = errorFor(status, errorBody, retryAfter);
      if (err instanceof Unavailable && retryAfter !== null && attempt < this.retries) {
        await sleep(Math.min(retryAfter, 30), options.signal);
        continue;
      }
      throw err;
    }
  }

  private async send(method: string, url: string, headers: Record<string, string>, body: string | undefined,
    timeout: number, signal: AbortSignal | undefined): Promise<{ status: number; text: string; retryAfter: number | null }> {
    for (let tries = 0; ; tries++) {
      const timer = AbortSignal.timeout(Math.max(1, Math.round(timeout * 1000)));
      const combined = signal ? AbortSignal.any([signal, timer]) : timer;
      try {
        const res = await globalThis.fetch(url, { method, headers, body, signal: combined });
        const text = await res.text();
        return { status: res.status, text, retryAfter: retryAfterOf(res) };
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        if (timer.aborted) {
          throw new NetworkError(`${method} ${url}: no answer within ${timeout} s`, { cause: e });
        }
        const code = causeCode(e);
        if (tries === 0 && code !== undefined && STALE.has(code)) continue;
        const why = (e as { cause?: { message?: string } })?.cause?.message ?? String(e);
        throw new NetworkError(`${method} ${url}: ${why}`, { cause: e });
      }
    }
  }

  /**
   * Closes nothing for now: Node's fetch pools the connections and closes idle ones on its own. Kept
   * so that code written against it need not change.
   */
  close(): void {}

  // -- publishing ---------------------------------------------------------------------------

  /**
   * Publishes one event. `payload` is any JSON value, or bytes (a Uint8Array, Buffer or ArrayBuffer,
   * sent as payloadBase64). `type` is required.
   */
  async publish(topic: string, payload: unknown, options: PublishOptions): Promise<Published> {
    if (!options || typeof options.type !== "string" || !options.type) {
      throw new TypeError("an event needs a type, such as { type: \"OrderPlaced\" }");
    }
    const { signal, ...fields } = options;
    const answer = await this.request<PublishResult>("POST", `/v1/topics/${seg(topic)}/events`,
      { body: outgoing({ ...fields, payload }), signal });
    return answer.results[0]!;
  }

  /** Publishes events all or nothing, in one transaction; one result per event, in order. */
  async publishBatch(topic: string, events: Iterable<BatchEvent>, options: CallOptions = {}): Promise<PublishResult> {
    const batch = Array.from(events, outgoing);
    return this.request<PublishResult>("POST", `/v1/topics/${seg(topic)}/events`,
      { body: { events: batch }, signal: options.signal });
  }

  // -- tail ---------------------------------------------------------------------------------

  /**
   * Follows a topic: an async iterable of Events that reconnects after a dropped connection and
   * resumes after the last event it gave (its `position`). See Tail.
   */
  tail(topic: string, options: TailOptions = {}): Tail {
    return new Tail(this, topic, options);
  }

  // -- admin --------------------------------------------------------------------------------

  async whoami(options: CallOptions = {}): Promise<Caller> {
    return this.request<Caller>("GET", "/v1/whoami", options);
  }

  async createTopic(name: string, options: Omit<TopicCreate, "name"> & CallOptions = {}): Promise<Topic> {
    const body: TopicCreate = noUndefined({ name, partitions: options.partitions, sequencing: options.sequencing });
    return this.request<Topic>("POST", "/v1/topics", { body, signal: options.signal });
  }

  async deleteTopic(name: string, options: { force?: boolean } & CallOptions = {}): Promise<void> {
    await this.request("DELETE", "/v1/topics/" + seg(name),
      { query: options.force ? { force: "true" } : undefined, signal: options.signal });
  }

  async createSubscription(name: string, topics: string[],
    options: Omit<SubscriptionCreate, "name" | "topics"> & CallOptions = {}): Promise<Subscription> {
    const body: SubscriptionCreate = noUndefined({ name, topics: [...topics], start: options.start });
    return this.request<Subscription>("POST", "/v1/subscriptions", { body, signal: options.signal });
  }

  async deleteSubscription(name: string, options: { force?: boolean } & CallOptions = {}): Promise<void> {
    await this.request("DELETE", "/v1/subscriptions/" + seg(name),
      { query: options.force ? { force: "true" } : undefined, signal: options.signal });
  }

  async lag(subscription: string, options: CallOptions = {}): Promise<SubscriptionLag> {
    return this.request<SubscriptionLag>("GET", `/v1/subscriptions/${seg(subscription)}/lag`, options);
  }

  async deadLetters(subscription: string, options: { limit?: number } & CallOptions = {}): Promise<DeadLetter[]> {
    const answer = await this.request<{ deadLetters: DeadLetter[] }>("GET",
      `/v1/subscriptions/${seg(subscription)}/dead-letters`, { query: { limit: options.limit ?? 100 }, signal: options.signal });
    return answer.deadLetters;
  }

  /** The consumer group as JSON: members, partitions, policy. */
  async group(subscription: string, options: CallOptions = {}): Promise<Group> {
    return this.request<Group>("GET", `/v1/subscriptions/${seg(subscription)}/group`, options);
  }

  // -- group member, one call each (Member runs the loop) -----------------------------------

  /** Checks the member in and fetches events; `settle` is settled first, in the same call. */
  async fetch(subscription: string, member: string, options: FetchOptions = {}): Promise<Batch> {
    const waitMillis = options.waitMillis ?? 0;
    const body: FetchRequest = noUndefined({
      max: options.max, waitMillis, weight: options.weight, payload: options.payload,
      settle: options.settle && options.settle.length ? options.settle : undefined,
    });
    // The long poll holds the answer back up to waitMillis: wait that much longer.
    return this.request<Batch>("POST", memberPath(subscription, member) + "/fetch",
      { body, timeout: this.timeout + waitMillis / 1000, signal: options.signal });
  }

  /** Settles fetched events; the number settled. A 409 (Fenced) names the refused partitions. */
  async settle(subscription: string, member: string, settlements: Settlement[], options: CallOptions = {}): Promise<number> {
    const answer = await this.request<{ settled?: number }>("POST", memberPath(subscription, member) + "/settle",
      { body: { settle: settlements }, signal: options.signal });
    return Number(answer?.settled ?? 0);
  }

  /** Leaves the group: the member's partitions are free for the others at once. */
  async leave(subscription: string, member: string, options: CallOptions = {}): Promise<boolean> {
    const answer = await this.request<{ left?: boolean } | null>("DELETE", memberPath(subscription, member), options);
    return Boolean(answer?.left);
  }
}

/**
 * The events of a topic's server-sent-event stream, as an async iterable:
 * `for await (const event of client.tail(topic)) …`.
 *
 * `position` is the stream's id after the last event given out; after a dropped connection the tail
 * reconnects with it (Last-Event-ID) and goes on after that event, so no event is given twice or
 * skipped. It gives up with a NetworkError after `maxReconnects` connections in a row that delivered
 * nothing. `close()` (or aborting the signal, or leaving the `for await` loop) ends the iteration.
 * An error answer other than 503 (such as NotFound) ends it with that error.
 */
export class Tail implements AsyncIterableIterator<Event> {
  /** Where the stream is: give it to a later tail (`position`) to go on after the last event given. */
  position: string | null;
  /** How many connections the tail has opened. */
  connections = 0;
  private readonly client: Client;
  private readonly url: string;
  private readonly readTimeout: number;
  private readonly maxReconnects: number;
  private readonly signal: AbortSignal | undefined;
  private retryMs = 1000;
  private closed = false;
  private controller: AbortController | null = null;
  private wake: (() => void) | null = null;
  private readonly events: AsyncGenerator<Event, void, undefined>;

  constructor(client: Client, topic: string, options: TailOptions = {}) {
    this.client = client;
    const query = new URLSearchParams(noUndefined({ from: options.from ?? "latest", key: options.key, type: options.type }) as
      Record<string, string>);
    this.url = `${client.baseUrl}/v1/topics/${seg(topic)}/tail?${query}`;
    this.position = options.position ?? null;
    this.readTimeout = options.readTimeout ?? 45;
    this.maxReconnects = options.maxReconnects ?? 10;
    this.signal = options.signal;
    if (this.signal) {
      if (this.signal.aborted) this.closed = true;
      else this.signal.addEventListener("abort", () => this.close(), { once: true });
    }
    this.events = this.run();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Event, void>> {
    return this.events.next();
  }

  async return(): Promise<IteratorResult<Event, void>> {
    this.close();
    return this.events.return(undefined);
  }

  /** Ends the iteration: a `next()` waiting for an event resolves as done. */
  close(): void {
    this.closed = true;
    this.controller?.abort();
    this.wake?.();
  }

  private async open(controller: AbortController): Promise<Response> {
    const headers = this.client.headers({ "Accept": "text/event-stream" });
    if (this.position) headers["Last-Event-ID"] = this.position;
    const res = await globalThis.fetch(this.url, { headers, signal: controller.signal });
    this.connections++;
    if (res.status !== 200) {
      const text = await res.text();
      const answer = parseJson(text);
      const body: ErrorBody = answer !== null && typeof answer === "object" ? answer as ErrorBody : { message: text.slice(0, 200) };
      throw errorFor(res.status, body, retryAfterOf(res));
    }
    if (!res.body) throw new NetworkError("the tail's answer has no body");
    return res;
  }

  private async *run(): AsyncGenerator<Event, void, undefined> {
    let idleConnections = 0;
    while (!this.closed) {
      let delivered = false;
      let lastError: unknown;
      const controller = new AbortController();
      this.controller = controller;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => controller.abort(
          new NetworkError(`the tail received nothing for ${this.readTimeout} s`)), this.readTimeout * 1000);
      };
      try {
        arm();
        const res = await this.open(controller);
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        const parser = new SseParser();
        parser.retryMs = this.retryMs;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          arm();
          const messages = parser.push(decoder.decode(value, { stream: true }));
          this.retryMs = parser.retryMs;
          for (const message of messages) {
            if (message.event !== "event" || message.data === null) continue;
            const event = JSON.parse(message.data) as Event;
            if (message.id !== null) this.position = message.id;
            delivered = true;
            clearTimeout(timer); // the time the caller takes is not the server's silence
            yield event;
            if (this.closed) return;
            arm();
          }
        }
        lastError = new NetworkError("the server ended the stream");
      } catch (e) {
        if (this.closed) return;
        if (e instanceof BoxlineError) {
          if (e.status !== 503) throw e;
        } else if (e instanceof SyntaxError) {
          throw e;
        }
        lastError = controller.signal.aborted && controller.signal.reason instanceof NetworkError
          ? controller.signal.reason : e;
      } finally {
        clearTimeout(timer);
        controller.abort();
        this.controller = null;
      }
      if (this.closed) return;
      // A stream that delivered something is resumed at once; one that did not waits the server's
      // `retry` interval, and only so many times in a row.
      idleConnections = delivered ? 0 : idleConnections + 1;
      if (idleConnections > this.maxReconnects) {
        const why = lastError instanceof Error ? lastError.message : String(lastError);
        throw new NetworkError(`the tail reconnected ${this.maxReconnects} times without an event; last error: ${why}`,
          { cause: lastError });
      }
      if (!delivered) {
        const waitMs = lastError instanceof Unavailable && lastError.retryAfter !== null
          ? Math.max(this.retryMs, lastError.retryAfter * 1000) : this.retryMs;
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, waitMs);
          this.wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
        this.wake = null;
      }
    }
  }
}
