import type {Modem} from "./modem.js";

/**
 * One modem used by two channels (voice_call and sms): the first to start opens it, the last to
 * stop closes it, so neither channel owns the serial port alone.
 */
export class SharedModem {
  private users = 0;
  private opening: Promise<void> | null = null;

  constructor(readonly modem: Modem) {}

  /** Resolves once the modem has been started (by this caller or the first one). */
  async open(): Promise<void> {
    this.users += 1;
    if (this.users === 1) this.opening = this.modem.start();
    await this.opening;
  }

  async close(): Promise<void> {
    if (this.users === 0) return;
    this.users -= 1;
    if (this.users === 0) await this.modem.stop();
  }
}
