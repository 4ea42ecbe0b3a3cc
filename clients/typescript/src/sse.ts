// A parser of server-sent events (text/event-stream), fed with decoded text as it arrives.

/** One server-sent event: its `id`, its `event` type (`message` when none was given) and its `data`. */
export interface SseMessage {
  readonly id: string | null;
  readonly event: string;
  readonly data: string | null;
}

/**
 * Splits a text/event-stream into messages. `push()` takes the next piece of text (a chunk may end
 * anywhere, even between `\r` and `\n`) and returns the messages it completed. `retryMs` is the last
 * `retry:` the stream sent (1000 before any). Comments (`: keep-alive`) are skipped.
 */
export class SseParser {
  retryMs = 1000;
  private buffer = "";
  private id: string | null = null;
  private event: string | null = null;
  private data: string[] = [];
  private skipLf = false;

  push(text: string): SseMessage[] {
    const out: SseMessage[] = [];
    let s = this.buffer + text;
    if (this.skipLf && s.startsWith("\n")) s = s.slice(1);
    this.skipLf = false;
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(s.slice(start, i), out);
      if (c === 13) {
        if (i + 1 < s.length) {
          if (s.charCodeAt(i + 1) === 10) i++;
        } else {
          this.skipLf = true; // the \n of this \r\n may come with the next chunk
        }
      }
      start = i + 1;
    }
    this.buffer = s.slice(start);
    return out;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === "") {
      if (this.data.length > 0 || this.event !== null) {
        out.push({ id: this.id, event: this.event ?? "message", data: this.data.length ? this.data.join("\n") : null });
      }
      this.id = null;
      this.event = null;
      this.data = [];
      return;
    }
    if (line.startsWith(":")) return; // a comment, such as the keep-alive
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "id") this.id = value;
    else if (name === "event") this.event = value;
    else if (name === "data") this.data.push(value);
    else if (name === "retry" && /^\d+$/.test(value)) this.retryMs = Number(value);
  }
}
