import {createRequire} from "node:module";
import type {CountryCode, PhoneNumber} from "libphonenumber-js/max";

type Libphonenumber = typeof import("libphonenumber-js/max");
let loaded: Libphonenumber | null = null;

/**
 * libphonenumber with its "max" metadata, loaded when a number is first checked or compared: its
 * 93 modules and the metadata cost about 2.5 MB of RSS (docs/benchmarks.md, "Idle footprint"), and
 * a gateway with no phone numbers (no modem, no recipient with a phone) never needs it. Loaded
 * synchronously (its CommonJS build), so the checks stay synchronous.
 */
function libphonenumber(): Libphonenumber {
  loaded ??= createRequire(import.meta.url)("libphonenumber-js/max") as Libphonenumber;
  return loaded;
}

/**
 * A phone number as a person typed it, checked against libphonenumber's metadata: either its
 * E.164 form (what the modem dials and what is stored) or why it is refused, in words.
 */
export type PhoneNumberCheck = {ok: true; e164: string} | {ok: false; detail: string};

const EXAMPLE = "e.g. +49 151 12345678";

/**
 * The one rule a request schema checks itself (so it is reported together with the body's other
 * errors): an international number starts with +. Everything finer is `checkPhoneNumber`'s.
 */
export const INTERNATIONAL_PREFIX = /^\s*\+/;

/** Why a number without the + is refused, in the schema's error and in `checkPhoneNumber`'s alike. */
export const NOT_INTERNATIONAL = `must be international: a + and the country calling code (${EXAMPLE}); 00 and national numbers are not accepted`;

const LENGTH_WORDS: Record<string, (code: string) => string> = {
  TOO_SHORT: (code) => `is too short for country calling code ${code}`,
  TOO_LONG: (code) => `is too long for country calling code ${code}`,
  INVALID_LENGTH: (code) => `has a length that no number with country calling code ${code} has`
};

/**
 * Checks an international phone number (a leading + and the country calling code; spaces, dashes,
 * dots and brackets are allowed) and returns its E.164 form.
 *
 * The gateway has no default region: a box in a factory has no reliable idea of "here", and a
 * national number guessed into the wrong country would page a stranger. So the + is required.
 * The "max" metadata is used: about 0.4 MB more heap than "min", and in exchange the number is
 * checked against each number type's own pattern (a German mobile number one digit short passes
 * "min", not "max").
 */
export function checkPhoneNumber(text: string): PhoneNumberCheck {
  const trimmed = text.trim();
  if (!INTERNATIONAL_PREFIX.test(trimmed)) return {ok: false, detail: NOT_INTERNATIONAL};
  let parsed;
  try {
    parsed = libphonenumber().parsePhoneNumberWithError(trimmed);
  } catch (error) {
    if (!(error instanceof libphonenumber().ParseError)) throw error;
    return {ok: false, detail: parseErrorWords(error.message, trimmed)};
  }
  if (parsed.ext)
    return {
      ok: false,
      detail: `has an extension (${parsed.ext}), which a call or an SMS cannot reach; give the direct number`
    };
  if (parsed.isValid()) return {ok: true, e164: parsed.number};
  const lengthProblem = libphonenumber().validatePhoneNumberLength(trimmed);
  const code = `+${parsed.countryCallingCode}`;
  const lengthWords = lengthProblem ? LENGTH_WORDS[lengthProblem] : undefined;
  if (lengthWords) return {ok: false, detail: lengthWords(code)};
  return {ok: false, detail: `not a valid phone number for any country with calling code ${code}`};
}

function parseErrorWords(code: string, text: string): string {
  switch (code) {
    case "INVALID_COUNTRY":
      return `does not start with a country calling code (no country uses ${callingCodePrefix(text)}…)`;
    case "TOO_SHORT":
      return "is too short to be a phone number";
    case "TOO_LONG":
      return "is too long to be a phone number";
    default:
      return `is not a phone number (${EXAMPLE})`;
  }
}

/** The first digits after the +, as far as a calling code can reach (1 to 3 digits). */
function callingCodePrefix(text: string): string {
  const digits = text.replace(/\D/g, "");
  return `+${digits.slice(0, 3) || "?"}`;
}

/**
 * True when `sender`, a number as the network reported it (E.164, 00-international or national),
 * is the line `recipient` (a stored E.164 number). A national sender is read with the recipient's
 * own country, as the network of that country would have written it; both sides are then compared
 * in E.164, whole. Never a suffix match: "12345678" is not "+4915112345678". An alphanumeric
 * sender or anything libphonenumber cannot read is nobody's number.
 */
export function sameLine(sender: string, recipient: string): boolean {
  const owner = parsed(recipient);
  if (!owner) return false;
  const compact = sender.replace(/[\s().\-/]/g, "");
  const international = compact.startsWith("00") ? `+${compact.slice(2)}` : compact;
  const from = international.startsWith("+")
    ? parsed(international)
    : parsed(international, owner.country, owner.countryCallingCode);
  return from !== null && from.number === owner.number;
}

function parsed(text: string, country?: CountryCode, callingCode?: string): PhoneNumber | null {
  if (!/^\+?\d{3,17}$/.test(text)) return null;
  try {
    return libphonenumber().parsePhoneNumberWithError(
      text,
      country ? {defaultCountry: country} : {defaultCallingCode: callingCode}
    );
  } catch (error) {
    if (error instanceof libphonenumber().ParseError) return null;
    throw error;
  }
}
