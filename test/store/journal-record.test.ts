import {describe, expect, it} from "vitest";
import {readFileSync, statSync} from "node:fs";
import {join} from "node:path";
import Database from "better-sqlite3";
import {ConfigStore} from "../../src/store/config/config-store.js";
import {JournalRecordKeeper} from "../../src/store/journal-record.js";
import {createLogger} from "../../src/lib/logger.js";
import {tempDir} from "../support/gateway.js";

const logger = createLogger("error", () => {});

const recordIn = (path: string) => (JSON.parse(readFileSync(path, "utf8")) as {journal?: unknown}).journal;

function identityIn(journalPath: string): {id: string; commits: number} {
  const db = new Database(journalPath, {readonly: true});
  try {
    return db.prepare("SELECT id, commits FROM journal_identity").get() as {id: string; commits: number};
  } finally {
    db.close();
  }
}

describe("the config store's record of the journal", () => {
  it("names only sealed commits, writes nothing while idle, keeps .bak the copy before the last edit, and closes once the WAL is folded in", async () => {
    const dir = tempDir();
    const journalPath = join(dir, "journal.sqlite");
    const configPath = join(dir, "config.json");
    const config = await ConfigStore.open(configPath);
    await config.update((draft) => void (draft.dashboard.password_set_at = "2026-11-28T08:00:00.000Z"));
    const editedBak = JSON.parse(readFileSync(`${configPath}.bak`, "utf8")) as Record<string, unknown>;
    const {journal, journalRecord} = await JournalRecordKeeper.open(
      {path: journalPath, logger},
      {path: configPath, store: config},
      {logger}
    );
    // A start that has not served writes no first record: it may yet remove the journal it made.
    expect(recordIn(configPath)).toBeUndefined();

    await journalRecord.start();
    const id = journal.read((db) => db.prepare("SELECT id FROM journal_identity").pluck().get() as string);
    expect(recordIn(configPath)).toEqual({id, commits: expect.any(Number), open: true});
    for (let probe = 0; probe < 5; probe++) await journal.probe(`2026-11-28T08:00:0${probe}Z`);
    await journalRecord.tick();
    const sealed = journal.read((db) => db.prepare("SELECT commits FROM journal_identity").pluck().get() as number);
    expect(recordIn(configPath)).toEqual({id, commits: sealed, open: true});
    expect(sealed).toBeGreaterThanOrEqual(5);
    // .bak is still the copy before the last edit, its record brought up to date.
    expect(JSON.parse(readFileSync(`${configPath}.bak`, "utf8"))).toEqual({
      ...editedBak,
      journal: recordIn(configPath)
    });

    const written = statSync(configPath).mtimeMs;
    await journalRecord.tick();
    expect(statSync(configPath).mtimeMs).toBe(written);

    await journal.probe("2026-11-28T08:01:00Z");
    await journalRecord.stop();
    await journal.close();
    const closed = identityIn(journalPath);
    expect(closed.commits).toBeGreaterThan(sealed);
    expect(recordIn(configPath)).toEqual({id, commits: closed.commits, open: false});
  });
});
