import type {Logger} from "../../lib/logger.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {maskContact} from "../../domain/recipient.js";
import {acknowledgerByPhone} from "../../domain/actor.js";
import {modemUnavailableReason} from "../../modem/availability.js";
import {ModemError, type Modem} from "../../modem/modem.js";
import {CallConversation} from "./call-conversation.js";
import {IncomingCalls, type IncomingCallsParts} from "./incoming-calls.js";
import type {SharedModem} from "../../modem/shared-modem.js";
import {ChannelError, type ChannelDriver, type Delivery, type DeliveryResult} from "../channel.js";
import {alertSpeech, CONFIRMATION_SPEECH, PASSED_ON_SPEECH, promptSpeech, type CallKeys} from "./speech.js";

export interface VoiceCallOptions {
  /** Serial device, for the reasons shown when the port is not open. */
  path: string;
  keys: CallKeys;
  ringTimeoutMs: number;
  /** How long to wait for a key after each prompt. */
  keyWaitMs: number;
  /** How many times the alert and the prompt are spoken at most. */
  speechRepeats: number;
  /** A settings problem found at start (e.g. two actions on one key): the channel stays unavailable. */
  settingsProblem: string | null;
}

/** How the last call ended, for /readyz. */
interface LastCall {
  at: string;
  to: string;
  outcome: DeliveryResult["outcome"];
  detail: string | null;
}

/** What VoiceCallDriver works with, by name. */
export interface VoiceCallDriverDeps {
  shared: SharedModem;
  options: VoiceCallOptions;
  clock: Clock;
  logger: Logger;
  /** What answering a recipient's call to the modem needs; null leaves such calls ringing. */
  callIns?: Pick<IncomingCallsParts, "remote" | "sendStatus"> | null;
}

/**
 * Calls the contact through the GSM modem and speaks the alerts, then the key prompt, up to
 * `speechRepeats` times. Key 1 acknowledges (committed before the confirmation is spoken), key 9
 * passes the alert on, key 2 repeats. "Answered" comes from call state, never from the dial's OK.
 * A recipient calling the modem is answered too (incoming-calls.ts); the line is one, so a page
 * due meanwhile waits for that call to end.
 */
export class VoiceCallDriver implements ChannelDriver {
  readonly channel = "voice_call" as const;
  readonly concurrency = 1;
  private lastCall: LastCall | null = null;

  private readonly conversation: CallConversation;
  private readonly incoming: IncomingCalls | null;

  constructor(private readonly deps: VoiceCallDriverDeps) {
    const {options, shared, logger, callIns} = deps;
    const {keyWaitMs, speechRepeats} = options;
    this.conversation = new CallConversation(shared.modem, {keyWaitMs, speechRepeats}, logger);
    this.incoming = callIns
      ? new IncomingCalls({
          ...callIns,
          modem: shared.modem,
          conversation: this.conversation,
          keys: options.keys,
          canSpeak: () => this.unavailableReason() === null,
          logger
        })
      : null;
  }

  private get modem(): Modem {
    return this.deps.shared.modem;
  }

  start(): Promise<void> {
    this.incoming?.start();
    return this.deps.shared.open();
  }

  async stop(): Promise<void> {
    await this.incoming?.stop();
    await this.deps.shared.close();
  }

  unavailableReason(): string | null {
    if (this.deps.options.settingsProblem) return this.deps.options.settingsProblem;
    const health = this.modem.health();
    const reason = modemUnavailableReason(health, this.deps.options.path);
    if (reason) return reason;
    return health.capabilities.includes("tts")
      ? null
      : `the ${health.profile} firmware has no text-to-speech for calls (the TTS setup was refused)`;
  }

  details(): Record<string, unknown> {
    return {...this.modem.health(), last_call: this.lastCall};
  }

  async deliver(delivery: Delivery, signal: AbortSignal): Promise<DeliveryResult> {
    const result = await this.call(delivery, signal).catch((error: unknown) => {
      const failure = toChannelError(error, signal);
      this.remember(delivery, "failed", failure.message);
      throw failure;
    });
    this.remember(delivery, result.outcome, result.detail);
    return result;
  }

  private async call(delivery: Delivery, signal: AbortSignal): Promise<DeliveryResult> {
    const unavailable = this.unavailableReason();
    if (unavailable) throw new ChannelError(unavailable, false);
    const hangUp = () => void this.modem.hangUp();
    signal.addEventListener("abort", hangUp);
    try {
      const dialled = await this.modem.dial(delivery.contact, this.deps.options.ringTimeoutMs, signal);
      if (signal.aborted) throw signal.reason;
      switch (dialled.result) {
        case "busy":
          return {outcome: "busy", detail: "the line was busy"};
        case "no_answer":
          return {
            outcome: "no_answer",
            detail: NO_ANSWER_DETAIL[dialled.reason ?? ""] ?? `not answered (${dialled.reason})`
          };
        case "failed":
          throw new ChannelError(`the call failed: ${dialled.reason}`, false);
        case "answered":
          return await this.converse(delivery, signal);
      }
    } finally {
      signal.removeEventListener("abort", hangUp);
      await this.modem.hangUp();
    }
  }

  // The answered part: speak, listen, act on the key. Any end of the call is still "answered".
  private async converse(delivery: Delivery, signal: AbortSignal): Promise<DeliveryResult> {
    const {keys} = this.deps.options;
    const speech = `${alertSpeech(delivery.alerts)} ${promptSpeech(keys)}`;
    const answer = await this.conversation.ask(speech, [keys.acknowledge, keys.passOn], keys.repeat);
    if (answer.kind === "ended") return answered(this.endedDetail(signal));
    if (answer.kind === "no_key")
      return answered(`answered, no key pressed after ${this.deps.options.speechRepeats} times`);
    if (answer.key === keys.acknowledge) return this.acknowledge(delivery);
    await this.say(PASSED_ON_SPEECH);
    return {outcome: "answered", detail: `key ${keys.passOn}: passed on to the next step`, passedOn: true};
  }

  private async acknowledge(delivery: Delivery): Promise<DeliveryResult> {
    const key = this.deps.options.keys.acknowledge;
    try {
      await delivery.acknowledge(acknowledgerByPhone(delivery.recipient.name, delivery.contact));
    } catch (error) {
      this.deps.logger.error("voice call: key pressed but the acknowledgement could not be committed", {
        error: error as Error
      });
      await this.say("Sorry, the acknowledgement could not be saved. The alert stays open.");
      return answered(`key ${key} pressed, but the acknowledgement failed: ${(error as Error).message}`);
    }
    await this.say(CONFIRMATION_SPEECH);
    return answered(`acknowledged with key ${key}`);
  }

  private say(text: string): Promise<boolean> {
    return this.conversation.say(text);
  }

  private endedDetail(signal: AbortSignal): string {
    if (signal.aborted) return `hung up by Klaxon: ${reasonOf(signal)}`;
    if (!this.modem.health().port_open) return "answered, then the modem was disconnected during the call";
    return "answered, then the callee hung up without pressing a key";
  }

  private remember(delivery: Delivery, outcome: DeliveryResult["outcome"], detail: string | null): void {
    this.lastCall = {at: isoTimestamp(this.deps.clock.now()), to: maskContact(delivery.contact), outcome, detail};
  }
}

const NO_ANSWER_DETAIL: Record<string, string> = {
  ring_timeout: "not answered before the ring timeout",
  answered_after_ring_timeout: "answered just after the ring timeout; hung up, the next attempt calls again",
  no_answer: "not answered (the network gave up)",
  no_carrier: "not answered (the call ended while ringing)",
  not_answered: "not answered (the call ended while ringing)"
};

function answered(detail: string): DeliveryResult {
  return {outcome: "answered", detail};
}

function reasonOf(signal: AbortSignal): string {
  return signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted");
}

// Only a number the modem refuses outright is worth marking unusable; everything else may work next time.
function toChannelError(error: unknown, signal: AbortSignal): ChannelError {
  if (error instanceof ChannelError) return error;
  if (signal.aborted) return new ChannelError(`call cancelled: ${reasonOf(signal)}`, false);
  if (error instanceof ModemError)
    return new ChannelError(`the modem could not call: ${error.message}`, error.code === "invalid_number");
  return new ChannelError(`the call failed: ${(error as Error)?.message ?? String(error)}`, false);
}
