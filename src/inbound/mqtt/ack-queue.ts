/** Sends one QoS 1 message's PUBACK. */
export type SendPuback = (messageId: number) => void;

interface Entry {
  messageId: number;
  settled: boolean;
}

/**
 * The PUBACKs of one connection, sent in the order the messages arrived (MQTT 5 section 4.6
 * asks it of a receiver), each once its own message and every earlier one have committed: a
 * message that commits early waits for its elders. `close` forgets the rest: a new connection
 * must not acknowledge what the old one received, since the broker sends those again.
 */
export class AckQueue {
  private readonly entries: Entry[] = [];
  private head = 0;
  private closed = false;

  constructor(private readonly send: SendPuback) {}

  /** A message arrived; call the returned function once it has committed. */
  add(messageId: number): () => void {
    const entry: Entry = {messageId, settled: false};
    this.entries.push(entry);
    return () => {
      entry.settled = true;
      this.drain();
    };
  }

  /** Messages received and not yet acknowledged. */
  get pending(): number {
    return this.entries.length - this.head;
  }

  close(): void {
    this.closed = true;
    this.entries.length = 0;
    this.head = 0;
  }

  private drain(): void {
    while (!this.closed && this.head < this.entries.length && this.entries[this.head].settled) {
      this.send(this.entries[this.head].messageId);
      this.head += 1;
    }
    // Compacted now and then rather than shifted per message: shift is linear in the array's length.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries.splice(0, this.head);
      this.head = 0;
    }
  }
}
