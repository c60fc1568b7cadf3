import {describe, expect, it} from "vitest";
import {checkPhoneNumber, sameLine} from "../../src/lib/phone-number.js";

describe("checkPhoneNumber", () => {
  it.each([
    ["+4915112345678", "+4915112345678"],
    ["  +49 (151) 1234-5678 ", "+4915112345678"],
    ["+49.151.12345678", "+4915112345678"],
    ["+1 201 555 0123", "+12015550123"],
    ["+44 20 7946 0958", "+442079460958"],
    ["+49 30 123456", "+4930123456"]
  ])("accepts %j as %s", (text, e164) => {
    expect(checkPhoneNumber(text)).toEqual({ok: true, e164});
  });

  it.each([
    ["+999123456789", "does not start with a country calling code (no country uses +999…)"],
    ["+15550000000", "not a valid phone number for any country with calling code +1"],
    // A German mobile number one digit short: its length fits some German numbers, not 0151's.
    ["+491511234567", "not a valid phone number for any country with calling code +49"],
    ["+1234", "is too short for country calling code +1"],
    ["+49", "is too short to be a phone number"],
    ["+call me", "is not a phone number (e.g. +49 151 12345678)"],
    [
      "015112345678",
      "must be international: a + and the country calling code (e.g. +49 151 12345678); 00 and national numbers are not accepted"
    ],
    [
      "004915112345678",
      "must be international: a + and the country calling code (e.g. +49 151 12345678); 00 and national numbers are not accepted"
    ],
    ["+49 151 12345678 ext. 12", "has an extension (12), which a call or an SMS cannot reach; give the direct number"]
  ])("refuses %j: %s", (text, detail) => {
    expect(checkPhoneNumber(text)).toEqual({ok: false, detail});
  });
});

describe("sameLine", () => {
  it.each([
    ["+4915112345678", "+4915112345678", true],
    ["015112345678", "+4915112345678", true],
    ["+49 151 1234-5678", "+4915112345678", true],
    ["004915112345678", "+4915112345678", true],
    ["(201) 555-0123", "+12015550123", true],
    ["02079460958", "+442079460958", true],
    // The national significant number without the trunk 0 is the same number in E.164.
    ["15112345678", "+4915112345678", true],
    // The suffix of a number is another number: read with the recipient's country, it is +4912345678.
    ["12345678", "+4915112345678", false],
    ["112345678", "+4915112345678", false],
    ["4915112345678", "+4915112345678", false],
    ["+4915112345679", "+4915112345678", false],
    ["+3315112345678", "+4915112345678", false],
    ["5678", "+4915112345678", false],
    ["Vodafone", "+4915112345678", false],
    ["", "+4915112345678", false]
  ])("sender %j is the line %s: %s", (sender, recipient, same) => {
    expect(sameLine(sender, recipient)).toBe(same);
  });
});
