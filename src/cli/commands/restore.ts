import {existsSync} from "node:fs";
import {join, resolve} from "node:path";
import {loadSettings} from "../../settings/load-settings.js";
import {BACKUPS_DIR} from "../../ops/backup-layout.js";
import {restoreBackup, RestoreError} from "../../ops/restore.js";
import {printResult, stringOption, type Command} from "../command.js";
import {CliError, EXIT} from "../failures.js";

export const restoreCommand: Command = {
  words: ["restore"],
  summary:
    "put a backup back into the data dir (on the box, with the gateway stopped); the replaced files are kept aside",
  args: "<backup-dir>",
  arity: [1, 1],
  options: {
    "data-dir": {
      type: "string",
      value: "DIR",
      description: "the data dir to restore into (default: data_dir from the settings)"
    },
    config: {
      type: "string",
      value: "FILE",
      description: "the config file naming the data dir (default: $KLAXON_CONFIG)"
    }
  },
  // Nothing to wait for: the restore is file moves; Command.run still answers with a promise.
  run(ctx) {
    const configFile = stringOption(ctx, "config");
    let dataDir = stringOption(ctx, "data-dir");
    if (!dataDir) {
      try {
        dataDir = loadSettings(configFile ? {...ctx.env, KLAXON_CONFIG: configFile} : ctx.env).settings.data_dir;
      } catch (error) {
        throw new CliError(`cannot tell the data dir: ${(error as Error).message}`, EXIT.usage);
      }
    }
    dataDir = resolve(dataDir);
    // A bare name is a backup the gateway made under <data_dir>/backups/ (what `klaxon-admin backup` prints).
    const argument = ctx.positionals[0];
    const named = join(dataDir, BACKUPS_DIR, argument);
    const backupDir = resolve(!argument.includes("/") && existsSync(named) ? named : argument);
    let result;
    try {
      result = restoreBackup(backupDir, dataDir);
    } catch (error) {
      if (error instanceof RestoreError) throw new CliError(`restore refused: ${error.message}`, EXIT.failed);
      throw error;
    }
    printResult(ctx, {backup: backupDir, data_dir: dataDir, ...result}, () =>
      [
        `restored ${result.restored.join(", ")} from ${backupDir} into ${dataDir}`,
        result.moved_aside
          ? `the files it replaced are in ${result.moved_aside}`
          : "the data dir held no files to replace"
      ].join("\n")
    );
    return Promise.resolve();
  }
};
