// Errors of the Boxline server: one class per status the client handles on its own.
import type { PartitionRef } from "./models.js";

/** The JSON body of an error answer, as received (it may carry fields this client does not know). */
export type ErrorBody = { readonly [field: string]: unknown };

/** An error answer: the HTTP status, the server's short code and its sentence. */
export class BoxlineError extends Error {
  /** The HTTP status, such as 404. */
  readonly status: number;
  /** The server's short machine-readable code, such as `not_found`. */
  readonly error: string;
  /** The server's sentence: what went wrong and how to fix it. */
  override readonly message: string;
  /** The whole error answer. */
  readonly body: ErrorBody;

  constructor(status: number, error: string, message: string, body: ErrorBody = {}) {
    super(`${status} ${error}: ${message}`);
    this.name = new.target.name;
    this.status = status;
    this.error = error;
    this.message = message;
    this.body = body;
  }

  override toString(): string {
    return `${this.name}: ${this.status} ${this.error}: ${this.message}`;
  }
}

/** 400: a name, parameter or body is not valid (for a settle: a bug in the client). */
export class BadRequest extends BoxlineError {}

/** 401: no token, or one the server does not know. */
export class Unauthorized extends BoxlineError {}

/** 403: the token's role or namespaces do not allow this. */
export class Forbidden extends BoxlineError {}

/** 404: no such topic, subscription, event or endpoint. */
export class NotFound extends BoxlineError {}

/** 409: a conflict; for a settle, `refused` names the partitions the member no longer holds. */
export class Conflict extends BoxlineError {
  /** On a settle's 409: the partitions the member no longer holds (empty otherwise). */
  get refused(): PartitionRef[] {
    const refused = this.body["refused"];
    return Array.isArray(refused)
      ? refused.map((r: { topic: string; partition: number }) => ({ topic: r.topic, partition: r.partition }))
      : [];
  }

  /** On a settle's 409: the events of the other partitions, which were settled. */
  get settled(): number | undefined {
    const settled = this.body["settled"];
    return typeof settled === "number" ? settled : undefined;
  }
}

/**
 * 409 on a settle (or a fetch that settles): the member is fenced out of the partitions in `refused`;
 * another member took them, or their cursors moved. Their events come again to the new owner. A
 * `Conflict` too, so `instanceof Conflict` catches it.
 */
export class Fenced extends Conflict {}

/** 503: overloaded, shutting down or too many streams; `retryAfter` in seconds when the server gave it. */
export class Unavailable extends BoxlineError {
  readonly retryAfter: number | null;

  constructor(status: number, error: string, message: string, body: ErrorBody = {},
    retryAfter: number | null = null) {
    super(status, error, message, body);
    this.retryAfter = retryAfter;
  }
}

/**
 * No answer: the connection failed or broke, or the server did not answer within the timeout. The
 * request may or may not have been carried out. The underlying failure is in `cause`.
 */
export class NetworkError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NetworkError";
  }
}

const BY_STATUS: Record<number, new (s: number, e: string, m: string, b: ErrorBody) => BoxlineError> = {
  400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict,
};

/** The error for an answer's status and JSON body (Retry-After in seconds for a 503). */
export function errorFor(status: number, body: ErrorBody, retryAfter: number | null = null): BoxlineError {
  const error = typeof body["error"] === "string" ? body["error"] : `http_${status}`;
  const message = typeof body["message"] === "string" ? body["message"] : `the server answered ${status}`;
  if (status === 503) return new Unavailable(status, error, message, body, retryAfter);
  if (status === 409 && Array.isArray(body["refused"])) return new Fenced(status, error, message, body);
  const cls = BY_STATUS[status] ?? BoxlineError;
  return new cls(status, error, message, body);
}
