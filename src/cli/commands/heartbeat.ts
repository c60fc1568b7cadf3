import {printResult, segment, type Command} from "../command.js";
import {timeText} from "../output.js";

/** What a ping answers: the heartbeat's state after it. */
interface PingAnswer {
  name: string;
  status: string;
  expected_at: string | null;
}

export const heartbeatCommands: Command[] = [
  {
    words: ["heartbeat", "ping"],
    summary: "ping a heartbeat: tells the gateway the job or device named is alive (key scope notifications:send)",
    args: "<name>",
    arity: [1, 1],
    async run(ctx) {
      const answer = await ctx.api().request<PingAnswer>({
        method: "POST",
        path: `api/v1/heartbeats/${segment(ctx.positionals[0])}/ping`,
        retry: "idempotent"
      });
      const {name, status, expected_at: expectedAt} = answer.body;
      printResult(
        ctx,
        answer.body,
        () => `pinged ${name}: ${status}${expectedAt ? `, next ping expected by ${timeText(expectedAt)}` : ""}`
      );
    }
  }
];
