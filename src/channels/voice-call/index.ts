import {Modem} from "../../modem/modem.js";
import {SharedModem} from "../../modem/shared-modem.js";
import {InboundSmsRepository} from "../../store/journal/inbound-sms.repository.js";
import {SmsReplyCodesRepository} from "../../store/journal/sms-reply-codes.repository.js";
import type {ChannelDriver} from "../channel.js";
import type {ChannelContext} from "../channel-context.js";
import {SmsCommandHandler} from "../sms/sms-command-handler.js";
import {SmsDriver} from "../sms/sms.driver.js";
import type {CallKeys} from "./speech.js";
import {VoiceCallDriver} from "./voice-call.driver.js";

const KEY = /^[0-9*#]$/;

/** The voice_call and sms drivers on one modem: one serial port, one line, one AT session. */
export function createModemDrivers(context: ChannelContext): ChannelDriver[] {
  const {settings, clock} = context;
  const modem = settings.modem;
  const logger = context.logger.child({component: "modem"});
  const shared = new SharedModem(
    new Modem({
      path: modem.port,
      profile: modem.profile,
      pin: modem.pin || undefined,
      urcPort: modem.quectel_urc_port || undefined,
      ringTimeoutMs: modem.ring_timeout_seconds * 1000,
      clock,
      logger
    })
  );
  const replyCodeTtlMs = modem.sms_reply_code_hours * 3600_000;
  const codes = new SmsReplyCodesRepository(context.journal);
  const smsLogger = logger.child({channel: "sms"});
  const commands = new SmsCommandHandler({
    remote: context.remoteControl,
    journal: context.journal,
    codes,
    replyCodeTtlMs,
    clock,
    logger: smsLogger
  });
  const sms = new SmsDriver({
    shared,
    options: {
      path: modem.port,
      replyCodeTtlMs,
      maxParts: Math.min(9, Math.max(1, Math.floor(modem.sms_max_parts)))
    },
    journal: context.journal,
    codes,
    inbound: new InboundSmsRepository(context.journal),
    commands,
    clock,
    logger: smsLogger
  });
  const keys: CallKeys = {acknowledge: modem.ack_key, repeat: modem.repeat_key, passOn: modem.pass_key};
  const voice = new VoiceCallDriver({
    shared,
    options: {
      path: modem.port,
      keys,
      ringTimeoutMs: modem.ring_timeout_seconds * 1000,
      keyWaitMs: modem.key_wait_seconds * 1000,
      speechRepeats: Math.max(1, Math.floor(modem.speech_repeats)),
      settingsProblem: keysProblem(keys)
    },
    clock,
    logger: logger.child({channel: "voice_call"}),
    callIns: {
      remote: context.remoteControl,
      sendStatus: async (person) => sms.sendText(person.phone, await commands.statusText(person))
    }
  });
  return [voice, sms];
}

// Reported as the channel's unavailable reason rather than refusing to start: SMS still works.
function keysProblem(keys: CallKeys): string | null {
  const given = [keys.acknowledge, keys.repeat, keys.passOn];
  if (!given.every((key) => KEY.test(key)))
    return "modem.ack_key, repeat_key and pass_key must each be one key: 0-9, * or #";
  return new Set(given).size === given.length
    ? null
    : "modem.ack_key, repeat_key and pass_key must be three different keys";
}
