/** Thrown when the journal cannot commit (disk full, I/O error, read-only medium): the API answers 503. */
export class StorageUnavailableError extends Error {
  override name = "StorageUnavailableError";
  constructor(override readonly cause: Error) {
    super(`journal cannot commit: ${cause.message}`);
  }
}

const DAMAGE_CODES = ["SQLITE_CORRUPT", "SQLITE_NOTADB"];
const STORAGE_ERROR_CODES = ["SQLITE_FULL", "SQLITE_IOERR", "SQLITE_READONLY", "SQLITE_CANTOPEN", ...DAMAGE_CODES];

const codeOf = (error: unknown): string => {
  const code = (error as {code?: unknown})?.code;
  return typeof code === "string" ? code : "";
};

/** SQLite could not use the medium (full, I/O error, read-only, damaged): the caller hears 503, not 500. */
export function isStorageError(error: unknown): boolean {
  return STORAGE_ERROR_CODES.some((prefix) => codeOf(error).startsWith(prefix));
}

/** Whether SQLite said the file itself is damaged (not full, not busy): no retry will help. */
export function isDamage(error: unknown): boolean {
  return DAMAGE_CODES.some((prefix) => codeOf(error).startsWith(prefix));
}
