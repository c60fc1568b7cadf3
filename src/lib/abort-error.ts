/**
 * What to reject with when a signal aborts: the reason given to `abort()` when it is an Error
 * (ours always are, and so is the platform's default), else an Error carrying it as text.
 */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new Error(typeof reason === "string" ? reason : "aborted");
}
