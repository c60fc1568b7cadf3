import type {SerialPort} from "serialport";
import {describeErrorCode} from "../../src/modem/at-error-codes.js";
import type {Dialect} from "./modem-simulator-script.js";

/**
 * The simulator's end of the serial line: answers and URCs framed as the dialect frames them, and
 * URCs held back to come inside the next answer. `port` is null while unplugged, and then every
 * write goes nowhere, as on a pulled cable.
 */
export class SimulatorLine {
  port: SerialPort | null = null;
  /**
   * AT+CMEE: 0 (the power-on default) turns every +CME ERROR into a plain ERROR, 1 keeps the
   * number, 2 prints the words. +CMS ERROR is always given (27.005), as a number or in words.
   */
  extendedErrors: 0 | 1 | 2 = 0;
  // Due URCs held for the next command's answer (ScriptedStatusReport.interleave).
  private readonly heldUrcs: string[] = [];

  constructor(private readonly dialect: Dialect) {}

  get attached(): boolean {
    return this.port !== null;
  }

  forgetHeldUrcs(): void {
    this.heldUrcs.length = 0;
  }

  holdUrc(line: string): void {
    this.heldUrcs.push(line);
  }

  urc(line: string): void {
    this.write(this.framedUrc(line));
  }

  // Held URCs go out inside the next answer, between its lines and its final OK.
  reply(...lines: string[]): void {
    const framed = lines.map((line) => `\r\n${this.extendedError(line)}\r\n`);
    if (this.heldUrcs.length && lines.at(-1) === "OK")
      framed.splice(-1, 0, ...this.heldUrcs.splice(0).map((line) => this.framedUrc(line)));
    this.write(framed.join(""));
  }

  write(text: string): void {
    this.port?.write(Buffer.from(text, "latin1"));
  }

  private extendedError(line: string): string {
    const match = /^\+(CME|CMS) ERROR: (\d+)$/.exec(line);
    if (!match) return line;
    const kind = match[1] === "CME" ? "cme" : "cms";
    if (kind === "cme" && this.extendedErrors === 0) return "ERROR";
    return this.extendedErrors === 2 ? `+${match[1]} ERROR: ${describeErrorCode(kind, Number(match[2]))}` : line;
  }

  // SIM7600 frames its URCs with two CRs (PROTOCOLS 1.0); the others use the plain framing.
  private framedUrc(line: string): string {
    return this.dialect === "sim7600" ? `\r\r\n${line}\r\r\n` : `\r\n${line}\r\n`;
  }
}
