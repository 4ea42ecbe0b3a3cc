// A consumer's TypeScript, type-checked by TypeScriptClientIT against the installed package (tsc --noEmit,
// strict, without skipLibCheck): the types a program sees, and what they refuse.
import {
  Client, Conflict, DeadLetter, Fenced, Member, NotFound, Retry,
  type Batch, type DeadLetterRecord, type Delivery, type Event, type OutgoingEvent, type Published,
  type PublishResult, type Settlement, type SubscriptionLag, type Tail,
} from "@boxline/client";

export async function consumer(url: string, token: string): Promise<void> {
  const client = new Client(url, token, { timeout: 10 });
  const published: Published = await client.publish("acme/orders", { orderId: 1 }, { type: "OrderPlaced", key: "order-1" });
  const id: string = published.id;
  const duplicate: boolean = published.duplicate;
  const events: OutgoingEvent[] = [{ type: "OrderPlaced", key: "order-2", payload: { orderId: 2 }, idempotencyKey: "o2" }];
  const result: PublishResult = await client.publishBatch("acme/orders", events, { signal: AbortSignal.timeout(5000) });
  const partition: number = result.results[0]!.partition;
  const tail: Tail = client.tail("acme/orders", { from: "earliest" });
  for await (const event of tail) {
    const e: Event = event;
    const key: string | null = e.key;
    const sequence: number = e.sequence;
    void [key, sequence];
    break;
  }
  const position: string | null = tail.position;
  const lag: SubscriptionLag = await client.lag("billing");
  const batch: Batch = await client.fetch("billing", "worker-1", { max: 10, waitMillis: 100 });
  const settlements: Settlement[] = batch.events.map((d: Delivery) => ({ ackId: d.ackId, outcome: "done" }));
  const settled: number = await client.settle("billing", "worker-1", settlements);
  const dead: DeadLetterRecord[] = await client.deadLetters("billing");
  const lastError: string | null = dead[0]!.lastError;
  const member = new Member(client, { subscription: "billing", memberId: "worker-1", maxInFlight: 4 });
  const controller = new AbortController();
  await member.run(async (delivery) => {
    if (delivery.attempt === 1) throw new Retry(0.5, "not yet");
    if (delivery.event.payload === null) return new DeadLetter("no payload");
  }, { signal: controller.signal });
  try {
    await client.settle("billing", "worker-1", settlements);
  } catch (e) {
    if (e instanceof Fenced) {
      const refused: { topic: string; partition: number }[] = e.refused;
      void refused;
    } else if (e instanceof Conflict || e instanceof NotFound) {
      const status: number = e.status;
      const code: string = e.error;
      void [status, code];
    }
  }
  void [id, duplicate, partition, position, lag, settled, lastError];

  // What the types refuse:
  // @ts-expect-error an event needs its type
  await client.publish("acme/orders", {}, { key: "k" });
  // @ts-expect-error an outcome is done, retry or dead
  const wrong: Settlement = { ackId: "a", outcome: "ok" };
  // @ts-expect-error answers are read-only
  published.id = "x";
  // @ts-expect-error a member needs its id
  new Member(client, { subscription: "billing" });
  void wrong;
}
