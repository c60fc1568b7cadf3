/** Failures of the high-level operations that are not a modem answer. */
export type ModemErrorCode =
  "not_ready" | "call_in_progress" | "no_active_call" | "invalid_number" | "tts_unsupported" | "sms_too_long";

/** Raised by the high-level operations when they cannot even be attempted. */
export class ModemError extends Error {
  constructor(
    readonly code: ModemErrorCode,
    message: string = code
  ) {
    super(message);
    this.name = "ModemError";
  }
}

// E.164 or a national number; nothing that could end the ATD string or start another command.
const NUMBER = /^\+?[0-9]{3,20}$/;

/** Refuses a number that could not be dialled or addressed (a call's ATD, an SMS's AT+CMGS). */
export function assertDialable(number: string): void {
  if (!NUMBER.test(number)) throw new ModemError("invalid_number", "number must be digits with an optional leading +");
}
