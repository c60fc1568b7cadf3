/**
 * Runs work one at a time per key (a heartbeat's name, say), in the order it was asked for; work
 * under different keys runs freely. A failure is the caller's to see and does not block the next.
 */
export class SerialByKey {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const run = previous.then(work);
    const tail = run.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }
}
