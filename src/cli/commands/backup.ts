import {printResult, type Command} from "../command.js";
import {fieldsText, tableText, timeText} from "../output.js";

/** What POST /api/v1/backups answers. */
interface Backup {
  name: string;
  created_at: string;
  path: string;
  files: Array<{name: string; bytes: number}>;
}

export const backupCommands: Command[] = [
  {
    words: ["backup"],
    summary: "make a consistent backup of the journal and config on the gateway (admin)",
    async run(ctx) {
      const answer = await ctx.api().request<Backup>({method: "POST", path: "api/v1/backups", retry: "create"});
      const backup = answer.body;
      printResult(
        ctx,
        backup,
        () =>
          fieldsText([
            ["backup", backup.name],
            ["created", timeText(backup.created_at)],
            ["path", backup.path]
          ]) +
          "\n\n" +
          tableText(
            ["FILE", "BYTES"],
            backup.files.map((file) => [file.name, file.bytes])
          )
      );
    }
  }
];
