/**
 * Runs work one at a time per key (a heartbeat's name, say), in the order it was asked for; work
 * under different keys runs freely. A failure is the caller's to see and does not block the next.
 */
export class SerialByKey {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    return this.runAll([key], work);
  }

  /**
   * Work that touches several keys: it waits for the work asked for earlier under any of them,
   * and later work under any of them waits for it. It never waits while holding a key, so two
   * callers naming the same keys in another order cannot block each other.
   */
  runAll<T>(keys: readonly string[], work: () => Promise<T>): Promise<T> {
    const previous = keys.map((key) => this.tails.get(key)).filter((tail) => tail !== undefined);
    const run = (previous.length ? Promise.all(previous) : Promise.resolve()).then(work);
    const tail = run.catch(() => undefined);
    for (const key of keys) this.tails.set(key, tail);
    void tail.then(() => {
      for (const key of keys) if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return run;
  }
}
