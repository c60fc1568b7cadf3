import {EventEmitter} from "node:events";
import {mkdtempSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {SerialPort} from "serialport";
import {PtyPair} from "./pty-pair.js";
import {createRecipient, startTestGateway, type TestGateway} from "./gateway.js";
import {SimulatedCalls, type IncomingCaller} from "./modem-simulator-calls.js";
import {SimulatorLine} from "./modem-simulator-line.js";
import {
  DEFAULT_SCRIPT,
  DIALECT_COMMANDS,
  isRegistered,
  type Dialect,
  type SentSms,
  type SimulatorScript
} from "./modem-simulator-script.js";
import {SimulatedSms} from "./modem-simulator-sms.js";

export type {Dialect, ScriptedCall, ScriptedStatusReport, SentSms, SimulatorScript} from "./modem-simulator-script.js";

/** The events a test can wait on instead of sleeping. */
interface SimulatorEvents {
  command: [command: string];
}

/**
 * A GSM modem on the far end of a real pty, speaking the SIM800, SIM7600 or Quectel dialect
 * closely enough for the AT layer: echo until ATE0, call-state URCs or +CLCC polling, TTS with
 * its done URC, DTMF URCs in each family's shape (SIM7600's `\r\r\n` framing included), two-phase
 * CMGS with increasing references and +CDS status reports, SIM PIN, registration, unplug and re-plug,
 * USB re-enumeration, another program holding the port, and the quirks of firmware seen in the
 * field (CMEE refused, ERROR to a bare AT, scripted +CME/+CMS answers, slow answers).
 * This class owns the pty, the command parser and the SIM and network answers; the voice side is
 * in modem-simulator-calls.ts, the SMS side in modem-simulator-sms.ts, the framing in modem-simulator-line.ts.
 */
export class ModemSimulator extends EventEmitter<SimulatorEvents> {
  readonly received: string[] = [];
  readonly script: SimulatorScript;
  private readonly line: SimulatorLine;
  private readonly calls: SimulatedCalls;
  /** The SMS side: PDU parts sent, concatenated and unreadable messages arriving, firmware quirks. */
  readonly sms: SimulatedSms;
  private input = "";
  private echo = true;
  private simUnlocked = false;
  // Our ends of ptys left behind by a re-enumeration, closed at stop.
  private readonly lingering: SerialPort[] = [];

  private constructor(
    readonly dialect: Dialect,
    private readonly pty: PtyPair,
    script: Partial<SimulatorScript>
  ) {
    super();
    this.script = {...DEFAULT_SCRIPT, ...script};
    this.line = new SimulatorLine(dialect);
    this.calls = new SimulatedCalls(dialect, this.line, this.script);
    this.sms = new SimulatedSms(this.line, this.script, (command) => this.record(command));
  }

  static async start(dialect: Dialect, script: Partial<SimulatorScript> = {}): Promise<ModemSimulator> {
    const simulator = new ModemSimulator(dialect, new PtyPair(mkdtempSync(join(tmpdir(), "klaxon-modem-"))), script);
    await simulator.plug();
    return simulator;
  }

  /** The serial device path for the code under test. */
  get devicePath(): string {
    return this.pty.devicePath;
  }

  /** The SMS the code under test sent, in order. */
  get sent(): SentSms[] {
    return this.sms.sent;
  }

  /** The SIM's message storage, by index; survives unplugging like a real SIM. */
  get storage(): Map<number, {sender: string; text: string}> {
    return this.sms.storage;
  }

  /**
   * Resolves with the first command starting with `prefix`, already received or still to come;
   * only those from position `from` of `received` on count.
   */
  waitForCommand(prefix: string, from = 0): Promise<string> {
    const seen = this.received.slice(from).find((command) => command.startsWith(prefix));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const listener = (command: string) => {
        if (!command.startsWith(prefix)) return;
        this.off("command", listener);
        resolve(command);
      };
      this.on("command", listener);
    });
  }

  count(prefix: string): number {
    return this.received.filter((command) => command.startsWith(prefix)).length;
  }

  /** Resolves with the first SMS sent to `number` at or after position `from` of `sent`. */
  waitForSms(from = 0): Promise<SentSms> {
    const seen = this.sent[from];
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const listener = () => {
        const next = this.sent[from];
        if (!next) return;
        this.off("command", listener);
        resolve(next);
      };
      this.on("command", listener);
    });
  }

  /** A message arrives from the network: stored on the SIM, announced with +CMTI if asked to and enabled. */
  receiveSms(sender: string, text: string, {announce = true} = {}): number {
    return this.sms.receive({sender, text}, announce);
  }

  /** `sender` texts `text`; the next SMS the modem sends (the gateway's answer, if it is one). */
  async answerTo(sender: string, text: string): Promise<SentSms> {
    const from = this.sent.length;
    this.receiveSms(sender, text);
    return this.waitForSms(from);
  }

  /**
   * The network reports on message `ref` with TP-Status `status`: a `+CDS` URC, if the modem was
   * told to pass reports on (CNMI <ds>=1). Without `number` the optional address fields are empty.
   */
  reportStatus(ref: number, status: number, {number = "", interleave = false} = {}): void {
    this.sms.reportStatus(ref, status, number, interleave);
  }

  /** Someone calls the modem from `number` (null: withheld); see SimulatedCalls.ring. */
  incomingCall(number: string | null, caller: IncomingCaller = {keys: []}): void {
    this.calls.ring(number, caller);
  }

  /** Someone calls while the line is in use (a waiting call); see SimulatedCalls.ringWhileBusy. */
  ringWhileBusy(number: string): void {
    this.calls.ringWhileBusy(number);
  }

  /** The caller of an incoming call hangs up. */
  callerHangsUp(): void {
    this.calls.callerHangsUp();
  }

  /** The call coming in (or answered), if any. */
  get incoming(): {number: string; answered: boolean} | null {
    return this.calls.incomingCall;
  }

  /** Pulls the USB cable: socat dies, both ends see the pty vanish, the device path disappears. */
  async unplug(): Promise<void> {
    const port = this.line.port;
    // Detached first, so ending the call sends nothing: a pulled cable says goodbye to no one.
    this.line.port = null;
    this.calls.endCall();
    await this.pty.kill();
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  /** Plugs it back in: a fresh module (echo on, volatile settings lost) on the same path. */
  async plug(): Promise<void> {
    this.resetVolatile();
    await this.pty.start();
    await this.attach();
    this.pty.publish();
  }

  /**
   * A USB re-enumeration (a brown-out, a hub reset): the module restarts as a new device, and the
   * stable path (`/dev/serial/by-id/...`), which never disappears, now leads to it. The old tty
   * stays while it is held open, and nothing answers on it any more: nothing tells its holder.
   */
  async reenumerate(): Promise<void> {
    const old = this.line.port;
    this.line.port = null;
    this.calls.endCall();
    if (old) this.lingering.push(old);
    this.resetVolatile();
    await this.pty.replace();
    await this.attach();
    this.pty.publish();
  }

  /** Another program opens the port too (ModemManager by default): it holds it until released. */
  holdPort(name = "ModemManager"): Promise<{pid: number; release(): Promise<void>}> {
    return this.pty.hold(name);
  }

  /** A program named `name` runs on the machine without the port open, until released. */
  runProgram(name: string): Promise<{pid: number; release(): Promise<void>}> {
    return this.pty.hold(name, "/dev/null");
  }

  private async attach(): Promise<void> {
    const port = new SerialPort({path: this.pty.peerPath, baudRate: 115200, lock: false, autoOpen: false});
    await new Promise<void>((resolve, reject) => port.open((error) => (error ? reject(error) : resolve())));
    port.on("data", (chunk: Buffer) => {
      if (this.line.port === port) this.receive(chunk.toString("latin1"));
    });
    port.on("error", () => {});
    this.line.port = port;
  }

  async stop(): Promise<void> {
    await this.unplug();
    for (const port of this.lingering.splice(0))
      if (port.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
    rmSync(this.pty.dir, {recursive: true, force: true});
  }

  private resetVolatile(): void {
    this.input = "";
    this.echo = true;
    this.simUnlocked = false;
    this.line.extendedErrors = 0;
    this.line.forgetHeldUrcs();
    this.calls.resetVolatile();
    this.sms.resetVolatile();
  }

  private receive(text: string): void {
    this.input += text;
    for (;;) {
      if (this.sms.awaitingText) {
        const rest = this.sms.takeText(this.input);
        if (rest === null) return;
        this.input = rest;
        continue;
      }
      const end = this.input.indexOf("\r");
      if (end === -1) return;
      const command = this.input.slice(0, end).replace(/\n/g, "").trim();
      this.input = this.input.slice(end + 1);
      if (command === "") continue;
      this.record(command);
      if (this.echo) this.line.write(command + "\r");
      if (!this.script.silent) this.answerInTime(command);
    }
  }

  private record(command: string): void {
    this.received.push(command);
    this.emit("command", command);
  }

  private answerInTime(command: string): void {
    const upper = command.toUpperCase();
    const slow = Object.entries(this.script.slowAnswersMs).find(([prefix]) => upper.startsWith(prefix.toUpperCase()));
    if (slow) setTimeout(() => this.answer(command), slow[1]);
    else this.answer(command);
  }

  private answer(command: string): void {
    const upper = command.toUpperCase();
    const reply = (...lines: string[]) => this.line.reply(...lines);
    if (this.script.failCommands.some((prefix) => upper.startsWith(prefix.toUpperCase()))) return reply("ERROR");
    const scripted = Object.entries(this.script.answers).find(([prefix]) => upper.startsWith(prefix.toUpperCase()));
    if (scripted) return reply(scripted[1]);
    if (upper === "ATE0") {
      this.echo = false;
      return reply("OK");
    }
    if (upper === "AT") return reply(this.script.atAnswer);
    if (upper.startsWith("AT+CMEE=")) return this.setExtendedErrors(upper);
    if (upper === "ATE1" || upper === "AT+COLP=0") return reply("OK");
    if (upper === "AT+CPIN?") return this.answerCpin();
    if (upper.startsWith("AT+CPIN=")) return this.enterPin(command);
    if (upper === "AT+CSQ") return reply(`+CSQ: ${this.script.csq},99`, "OK");
    if (upper === "AT+CREG?") return reply(`+CREG: 0,${this.script.registration}`, "OK");
    if (upper === "AT+CEREG?")
      return this.dialect === "sim800" ? reply("ERROR") : reply(`+CEREG: 0,${this.script.registration}`, "OK");
    if (upper === "AT+COPS?")
      return isRegistered(this.script)
        ? reply(`+COPS: 0,0,"${this.script.operator}",7`, "OK")
        : reply("+COPS: 0", "OK");
    if (upper === "AT+CFUN=1,1") return this.reset();
    if (upper === "AT+CLCC") return this.calls.list();
    if (this.calls.answerCommon(upper)) return;
    if (this.sms.answer(upper, command)) return;
    if (upper.startsWith("ATD")) return this.calls.dial(command);
    if (!DIALECT_COMMANDS[this.dialect].some((prefix) => upper.startsWith(prefix))) return reply("ERROR");
    if (this.calls.answer(upper)) return;
    if (upper === "AT+QINISTAT") return reply(`+QINISTAT: ${this.script.simInitStatus}`, "OK");
    reply("OK");
  }

  private setExtendedErrors(upper: string): void {
    const mode = Number(upper.slice("AT+CMEE=".length) || 0);
    if (mode !== 0 && mode !== 1 && mode !== 2) return this.line.reply("ERROR");
    this.line.extendedErrors = mode;
    this.line.reply("OK");
  }

  private answerCpin(): void {
    if (this.script.sim === "absent") return this.line.reply("+CME ERROR: 10");
    if (this.script.sim === "pin" && !this.simUnlocked) return this.line.reply("+CPIN: SIM PIN", "OK");
    this.line.reply("+CPIN: READY", "OK");
  }

  private enterPin(command: string): void {
    if (this.script.sim === "absent") return this.line.reply("+CME ERROR: 10");
    const pin = /="?([^"]*)"?/.exec(command)?.[1];
    if (pin !== this.script.pin) return this.line.reply("+CME ERROR: 16");
    this.simUnlocked = true;
    this.line.reply("OK");
  }

  private reset(): void {
    this.line.reply("OK");
    this.calls.endCall();
    this.resetVolatile();
  }
}

/** A production-wired gateway (real voice_call and sms drivers) on a simulated modem. */
export interface ModemGatewayRig {
  simulator: ModemSimulator;
  gw: TestGateway;
  /** Creates a recipient reachable on `channels` only; one step per channel unless `repeat` says otherwise. */
  recipient(channels: string[], fields?: Record<string, unknown>): Promise<string>;
  send(recipient: string, message?: string, source?: string): Promise<string>;
  /** The notification once every delivery under way has ended and been recorded. */
  notification(id: string): Promise<any>;
  stop(): Promise<void>;
}

/** Short real timeouts (settings), so a test of a ring or a key wait takes a fraction of a second. */
export async function startModemGateway(
  dialect: Dialect,
  script: Partial<SimulatorScript> = {},
  modem: Record<string, unknown> = {}
): Promise<ModemGatewayRig> {
  const simulator = await ModemSimulator.start(dialect, script);
  const gw = await startTestGateway(
    {
      modem: {
        port: simulator.devicePath,
        profile: dialect,
        ring_timeout_seconds: 2,
        key_wait_seconds: 0.5,
        speech_repeats: 2,
        ...modem
      }
    },
    {drivers: "production"}
  );
  return {
    simulator,
    gw,
    async recipient(channels, fields = {}) {
      return createRecipient(gw, {
        channel_order: channels,
        escalation: {ack_timeout_seconds: 3600, repeat: 0},
        ...fields
      });
    },
    async send(recipient, message = "Oil temperature high", source = "press-7") {
      const answer = await gw.call("POST", "/api/v1/notifications/send", {
        body: {recipient_uuid: recipient, message, priority: "critical", source}
      });
      if (answer.status !== 202) throw new Error(`send failed: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body.notification_uuid;
    },
    async notification(id) {
      await gw.gateway.services.runner.idle();
      return (await gw.call("GET", `/api/v1/notifications/${id}`)).body;
    },
    async stop() {
      await gw.stop();
      await simulator.stop();
    }
  };
}
