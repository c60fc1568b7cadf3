/**
 * The modem's one line, held by one operation at a time: a call from dial to the confirmed end,
 * or an SMS exchange (send, list, read, delete). They would otherwise share the AT session
 * command by command, and an SMS operation switches the character set (AT+CSCS) that a speak
 * command issued in between would then be read with. Waiters are served first come, first served.
 */
export class LineLock {
  private tail: Promise<void> = Promise.resolve();
  private holders = 0;
  // Aborted by the next acquire: the background work holding the line should step aside.
  private background: AbortController | null = null;

  get busy(): boolean {
    return this.holders > 0;
  }

  /** Resolves with the release function once the line is ours; rejects if `signal` aborts first. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    this.background?.abort();
    let releaseSlot!: () => void;
    const slot = new Promise<void>((resolve) => (releaseSlot = resolve));
    const previous = this.tail;
    // A waiter that gives up still passes the line on, and only after the one before it.
    this.tail = previous.then(() => slot);
    this.holders += 1;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.holders -= 1;
      releaseSlot();
    };
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        release();
        reject(
          signal!.reason instanceof Error ? signal!.reason : new Error("aborted while waiting for the modem line")
        );
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, {once: true});
      void previous.then(() => {
        signal?.removeEventListener("abort", onAbort);
        if (!released) resolve(release);
      });
    });
  }

  /**
   * Runs background work (the health pass) holding the line, but only if nobody holds or waits
   * for it: else resolves false at once. `wanted` aborts as soon as anyone else asks for the line,
   * and the work should then stop before its next command, so a call dialled during a health pass
   * waits for the one command in flight, not for the whole pass.
   */
  async ifIdle(work: (wanted: AbortSignal) => Promise<void>): Promise<boolean> {
    if (this.busy) return false;
    const acquired = this.acquire();
    const wanted = new AbortController();
    this.background = wanted;
    const release = await acquired;
    try {
      await work(wanted.signal);
    } finally {
      if (this.background === wanted) this.background = null;
      release();
    }
    return true;
  }

  /** Runs `work` holding the line. */
  async with<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await work();
    } finally {
      release();
    }
  }
}
