/**
 * Exit codes (CONTRACT section 11) and the errors that carry them. Scripts branch on these numbers,
 * so each failure maps to exactly one of them.
 */
export const EXIT = {
  ok: 0,
  /** The command ran and the answer is "no": doctor found a problem, or the gateway refused a change in the current state (409). */
  failed: 1,
  /** Bad command line, or a request the gateway rejected as invalid (400, 413, 415, 422). */
  usage: 2,
  notFound: 3,
  /** Missing, unknown or revoked key (401), or a key without the scope (403). */
  auth: 4,
  /** Server error, rate limit or network failure, after the retries ran out. */
  unavailable: 5
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An RFC 9457 problem as the gateway sends it (CONTRACT section 6). */
export interface Problem {
  type?: string;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  code?: string;
  errors?: Array<{pointer: string; detail: string}>;
}

/** A failure the CLI reports on stderr and turns into its exit code. */
export class CliError extends Error {
  override name = "CliError";

  constructor(
    message: string,
    readonly exitCode: ExitCode,
    readonly problem: Problem | null = null
  ) {
    super(message);
  }
}

export class UsageError extends CliError {
  override name = "UsageError";

  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

function exitCodeForStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404) return EXIT.notFound;
  if (status === 409) return EXIT.failed;
  if (status === 429 || status >= 500) return EXIT.unavailable;
  return EXIT.usage;
}

/** The error for a non-2xx answer that is final (not retried, or retried until the attempts ran out). */
export function apiFailure(problem: Problem): CliError {
  const fieldLines = (problem.errors ?? [])
    .map((error) => `\n  ${error.pointer || "(body)"}: ${error.detail}`)
    .join("");
  const message = `${problem.status} ${problem.title}${problem.detail ? `: ${problem.detail}` : ""}${fieldLines}`;
  return new CliError(message, exitCodeForStatus(problem.status), problem);
}
