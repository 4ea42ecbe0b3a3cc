// Boxline client: publish, tail and consume over the Boxline server's HTTP API (no dependencies).
export {
  API_VERSION, Client, Tail, USER_AGENT, VERSION,
  type BatchEvent, type CallOptions, type ClientOptions, type FetchOptions, type Group, type PublishOptions,
  type RequestOptions, type TailOptions,
} from "./client.js";
export {
  BadRequest, BoxlineError, Conflict, Fenced, Forbidden, NetworkError, NotFound, Unauthorized, Unavailable,
  errorFor, type ErrorBody,
} from "./errors.js";
// DeadLetter is the handler's decision; the record the server lists is the model DeadLetterRecord.
export { DeadLetter, Member, Retry, type Handler, type Logger, type MemberOptions } from "./member.js";
export { SseParser, type SseMessage } from "./sse.js";
export type {
  Batch, Caller, Delivery, Event, FetchRequest, Lag, OutgoingBatch, OutgoingEvent, PartitionRef, Published,
  PublishResult, SettleRequest, Settlement, Subscription, SubscriptionCreate, SubscriptionLag, Topic, TopicCreate,
  DeadLetter as DeadLetterRecord, Error as ErrorAnswer, ModelName,
} from "./models.js";
export type * as models from "./models.js";
