/** How long a link waits before connecting again: the first pause, doubled per failure in a row, capped. */
export interface ReconnectSchedule {
  readonly firstMs: number;
  readonly maxMs: number;
}

/**
 * The reconnect pauses of one device link (Modbus, OPC UA): each failure in a row doubles the
 * pause from `firstMs` up to `maxMs`, and an answer starts the schedule again. A dead device is
 * then asked rarely (it costs a timer, never a blocked thread), and one that comes back is found
 * within `maxMs`.
 */
export class ReconnectBackoff {
  private inRow = 0;

  constructor(private readonly schedule: ReconnectSchedule) {}

  /** Failures since the last success. */
  get failures(): number {
    return this.inRow;
  }

  /** Counts one more failure and answers the pause before the next attempt. */
  failed(): number {
    // 2^30 is past any cap; the exponent stops there so a long outage never overflows.
    const pause = Math.min(this.schedule.maxMs, this.schedule.firstMs * 2 ** Math.min(this.inRow, 30));
    this.inRow++;
    return pause;
  }

  succeeded(): void {
    this.inRow = 0;
  }
}
