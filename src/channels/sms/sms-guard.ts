/**
 * Wrong reply codes and PINs per phone: after `limit` in `windowMs` the phone's messages get no
 * answer and do nothing until the oldest of them leaves the window. Guessing a code or a PIN by
 * SMS then costs `windowMs` per `limit` tries, and the box sends no SMS to a guesser.
 */
export class WrongGuesses {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly limit = 5,
    private readonly windowMs = 10 * 60_000
  ) {}

  blocked(phone: string, nowMs: number): boolean {
    return this.recent(phone, nowMs).length >= this.limit;
  }

  record(phone: string, nowMs: number): void {
    this.failures.set(phone, [...this.recent(phone, nowMs), nowMs]);
  }

  private recent(phone: string, nowMs: number): number[] {
    const kept = (this.failures.get(phone) ?? []).filter((at) => nowMs - at < this.windowMs);
    if (kept.length === 0) this.failures.delete(phone);
    return kept;
  }
}

/**
 * "ACK 4821 1234" from a phone with a PIN: the command ("ACK 4821") and the PIN ("1234"), the
 * PIN being the last group of 4 to 8 digits; null when the text ends in none.
 */
export function splitPin(text: string): {command: string; pin: string | null} {
  const match = /^(.*?)\s*(?<!\d)(\d{4,8})\s*[.!]?\s*$/s.exec(text);
  return match ? {command: match[1], pin: match[2]} : {command: text, pin: null};
}
