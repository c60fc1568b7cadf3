import {existsSync, mkdirSync, rmSync} from "node:fs";
import {join} from "node:path";

/**
 * What one start adds to the data dir, so a start that fails before it serves (its port taken)
 * leaves the data dir as it found it: no new journal, config store or admin key for the next start
 * to trip over. Only what did not exist before this start is removed.
 */
export class StartFootprint {
  private constructor(
    private readonly dataDir: string,
    private readonly createdDir: string | undefined,
    private readonly newFiles: string[]
  ) {}

  /** Makes the data dir (0700 whatever the umask; the umask can only take bits away) and notes which of `files` it lacks. */
  static create(dataDir: string, files: string[]): StartFootprint {
    const createdDir = mkdirSync(dataDir, {recursive: true, mode: 0o700});
    return new StartFootprint(
      dataDir,
      createdDir,
      files.filter((file) => !existsSync(join(dataDir, file)))
    );
  }

  /** After the stores are closed: removes the files this start made, and the dirs, if it made them. */
  undo(): void {
    if (this.createdDir) rmSync(this.createdDir, {recursive: true, force: true});
    else for (const file of this.newFiles) rmSync(join(this.dataDir, file), {force: true});
  }
}
