/**
 * Polls until `check` holds: for state that a background loop on a real timer changes (a probe,
 * a server check, a relay). Fails after `limitMs` with the last value seen.
 */
export async function eventually<T>(
  what: string,
  read: () => Promise<T> | T,
  check: (value: T) => boolean,
  limitMs = 10_000
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
