/**
 * Polls until `check` holds: for state that a background loop on a real timer changes (a probe,
 * a server check, a relay). Fails after `limitMs` with the last value seen: generous, because a
 * condition that comes costs nothing more, and CI's 2-core machine runs two gateways side by side.
 */
export async function eventually<T>(
  what: string,
  read: () => Promise<T> | T,
  check: (value: T) => boolean,
  limitMs = 20_000
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await read();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
