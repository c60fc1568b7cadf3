import type {Logger} from "../../lib/logger.js";
import {maskContact} from "../../domain/recipient.js";
import type {Modem} from "../../modem/modem.js";
import type {PhoneOwner, RemoteControlPort} from "../channel.js";
import {phoneOwnerOf} from "../remote-control.js";
import type {CallConversation} from "./call-conversation.js";
import {
  ACKNOWLEDGED_SPEECH,
  CALLED_IN_DONE_SPEECH,
  calledInSpeech,
  NO_OPEN_ALERTS_SPEECH,
  PIN_SPEECH,
  WRONG_PIN_SPEECH,
  type CallKeys
} from "./speech.js";

// The longest PIN a recipient can set; keys past it end the entry like #.
const MAX_PIN_KEYS = 8;

/** What answering calls to the modem needs besides the modem itself. */
export interface IncomingCallsParts {
  modem: Modem;
  remote: RemoteControlPort;
  conversation: CallConversation;
  keys: CallKeys;
  /** False where the calls cannot be spoken to (no TTS, keys misconfigured, modem not ready). */
  canSpeak(): boolean;
  /** Sends the person their STATUS list by SMS: the answer when the call cannot be spoken to. */
  sendStatus(person: PhoneOwner): Promise<void>;
  logger: Logger;
}

/**
 * Calls to the modem, one at a time. A recipient calling from their phone is answered and hears
 * the open alerts sent to them one by one, each with "press 1 to acknowledge, 2 for the next";
 * a stranger (or a withheld number) is turned away without answering, so nothing is said to
 * them and the call costs them nothing. Where calls cannot be spoken to, the recipient is turned
 * away too and gets the STATUS list by SMS instead.
 */
export class IncomingCalls {
  private current: Promise<void> = Promise.resolve();
  private readonly onIncoming = (number: string | null) => {
    this.current = this.current
      .then(() => this.handle(number))
      .catch((error: unknown) =>
        this.parts.logger.warn("voice call: a call to the modem failed", {error: error as Error})
      );
  };

  constructor(private readonly parts: IncomingCallsParts) {}

  start(): void {
    this.parts.modem.on("incoming_call", this.onIncoming);
  }

  async stop(): Promise<void> {
    this.parts.modem.off("incoming_call", this.onIncoming);
    await this.current;
  }

  private async handle(number: string | null): Promise<void> {
    const {modem, remote, logger} = this.parts;
    const person = phoneOwnerOf(remote, number);
    const from = number ? maskContact(number) : "withheld";
    if (!person) {
      logger.info("voice call: call from a number that is no recipient's; rejected unanswered", {from});
      return modem.rejectIncoming();
    }
    if (!this.parts.canSpeak()) {
      logger.info("voice call: call from a recipient, but calls cannot be spoken to; STATUS goes by SMS", {from});
      await modem.rejectIncoming();
      await remote.record(person, "voice_call", "call in: STATUS by SMS");
      return this.parts.sendStatus(person);
    }
    if (!(await modem.answerIncoming())) return;
    logger.info("voice call: answered a call from a recipient", {from});
    try {
      if (!(await this.pinGiven(person))) return;
      await remote.record(person, "voice_call", "call in");
      await this.converse(person);
    } finally {
      await modem.hangUpIncoming();
    }
  }

  // Caller id can be forged: a recipient with a command_pin hears nothing until it is keyed in.
  private async pinGiven(person: PhoneOwner): Promise<boolean> {
    if (!person.hasPin) return true;
    const {conversation, remote, logger} = this.parts;
    const typed = await conversation.keys(PIN_SPEECH, MAX_PIN_KEYS);
    if (typed !== null && (await remote.checkPin(person, typed))) return true;
    logger.warn("voice call: a call from a recipient's number gave no or a wrong PIN; hung up", {
      from: maskContact(person.phone)
    });
    await remote.record(person, "voice_call", "call in: wrong PIN");
    if (typed !== null) await conversation.say(WRONG_PIN_SPEECH);
    return false;
  }

  // The alerts are read at the answer: one acknowledged meanwhile elsewhere is still offered, and
  // acknowledging it again changes nothing.
  private async converse(person: PhoneOwner): Promise<void> {
    const {remote, conversation, keys, logger} = this.parts;
    const alerts = remote.openAlertsSentTo(person);
    if (alerts.length === 0) return void (await conversation.say(NO_OPEN_ALERTS_SPEECH));
    for (const [index, alert] of alerts.entries()) {
      const answer = await conversation.ask(calledInSpeech(alert, index, alerts.length, keys), [
        keys.acknowledge,
        keys.repeat
      ]);
      if (answer.kind !== "key") return;
      if (answer.key !== keys.acknowledge) continue;
      try {
        await remote.acknowledge([alert.notification_id], person, "voice_call");
      } catch (error) {
        logger.error("voice call: key pressed but the acknowledgement could not be committed", {error: error as Error});
        if (!(await conversation.say("Sorry, the acknowledgement could not be saved."))) return;
        continue;
      }
      if (!(await conversation.say(ACKNOWLEDGED_SPEECH))) return;
    }
    await conversation.say(CALLED_IN_DONE_SPEECH);
  }
}
