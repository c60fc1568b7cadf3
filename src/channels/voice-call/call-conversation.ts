import type {Logger} from "../../lib/logger.js";
import {ModemError, type Modem} from "../../modem/modem.js";

/** What came of a question on the phone: a key it listens for, silence, or the call being over. */
export type CallAnswer = {kind: "key"; key: string} | {kind: "no_key"} | {kind: "ended"};

export interface ConversationOptions {
  /** How long to wait for a key after each time the question is spoken. */
  keyWaitMs: number;
  /** How many times the question is spoken at most. */
  speechRepeats: number;
}

/**
 * Speaking and listening on a connected call, whichever side dialled: the same speech, the same
 * keys, the same patience for the alert call and for a recipient calling in.
 */
export class CallConversation {
  constructor(
    private readonly modem: Modem,
    private readonly options: ConversationOptions,
    private readonly logger: Logger
  ) {}

  /**
   * Speaks `speech` and waits for one of `keys`; silence, `repeatKey` or any other key asks
   * again, up to `speechRepeats` times.
   */
  async ask(speech: string, keys: string[], repeatKey?: string): Promise<CallAnswer> {
    for (let round = 1; round <= this.options.speechRepeats; round++) {
      if (!(await this.say(speech))) return {kind: "ended"};
      const wait = await this.modem.waitForKey(this.options.keyWaitMs);
      if (wait.kind === "ended") return {kind: "ended"};
      if (wait.kind === "key" && wait.key !== repeatKey && keys.includes(wait.key)) return wait;
    }
    return {kind: "no_key"};
  }

  /**
   * Speaks `speech` once and gathers the keys pressed until #, a pause of the key wait, or
   * `maxKeys` keys; null when the call ended meanwhile.
   */
  async keys(speech: string, maxKeys: number): Promise<string | null> {
    if (!(await this.say(speech))) return null;
    let typed = "";
    while (typed.length < maxKeys) {
      const wait = await this.modem.waitForKey(this.options.keyWaitMs);
      if (wait.kind === "ended") return null;
      if (wait.kind !== "key" || wait.key === "#") break;
      typed += wait.key;
    }
    return typed;
  }

  /** False once the call is over (hung up, aborted, modem gone); a speech error is no reason to fail an answered call. */
  async say(text: string): Promise<boolean> {
    try {
      await this.modem.speak(text);
      return true;
    } catch (error) {
      if (!(error instanceof ModemError && error.code === "no_active_call"))
        this.logger.warn("voice call: speech failed", {error: error as Error});
      return false;
    }
  }
}
