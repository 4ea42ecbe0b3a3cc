// A group member as its own process, for member.test.mjs: handles events by appending
// `key i pid` to a file, until SIGTERM (then it settles, leaves and exits 0).
//
//     node member-proc.mjs URL TOKEN SUBSCRIPTION MEMBER_ID OUTFILE
import { appendFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { Member } from "@boxline/client";

const [url, token, subscription, memberId, outfile] = process.argv.slice(2);
const member = new Member(url, {
  token, subscription, memberId, maxInFlight: 4, maxEvents: 50, waitMillis: 500, handleSignals: true,
});
await member.run(async (delivery) => {
  const event = delivery.event;
  await delay(10); // the work of a real handler, so that the run lasts past the kill
  appendFileSync(outfile, `${event.key} ${event.payload.i} ${process.pid}\n`); // a SIGKILL loses no written line
});
console.log(`member ${memberId} handled ${member.handled}, ${member.conflicts} conflicts`);
