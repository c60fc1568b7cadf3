import {existsSync} from "node:fs";
import {join, resolve} from "node:path";
import {loadSettings} from "../settings/load-settings.js";
import {BACKUPS_DIR} from "./backup-layout.js";
import {restoreBackup} from "./restore.js";

/**
 * `npm run restore -- <backup>` (a checkout) or `node /opt/klaxon/dist/ops/restore-command.js <backup>`
 * (installed; run it as the klaxon user or root with the service stopped). <backup> is a folder,
 * or the name of one under <data_dir>/backups/. The data dir comes from the usual settings.
 */
function main(argv: string[]): number {
  const [argument] = argv;
  if (!argument || argument.startsWith("-")) {
    process.stderr.write("usage: restore <backup folder, or its name under <data_dir>/backups>\n");
    return 2;
  }
  const dataDir = resolve(loadSettings().settings.data_dir);
  const named = join(dataDir, BACKUPS_DIR, argument);
  const backupDir = !argument.includes("/") && existsSync(named) ? named : argument;
  const result = restoreBackup(backupDir, dataDir);
  process.stdout.write(`restored ${result.restored.join(", ")} from ${resolve(backupDir)} into ${dataDir}\n`);
  if (result.moved_aside) process.stdout.write(`the files it replaced are in ${result.moved_aside}\n`);
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`restore failed: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
