import {serveSupervisedWork, supervisedWorkerData} from "../../src/lib/supervised-worker.js";

/** What the test asks of one piece of work: answer it, or misbehave in one of the ways a parser can. */
export type MisbehavingWork = {do: "echo"; text: string} | {do: "throw"} | {do: "hang"} | {do: "eat"} | {do: "reject"};

const {greeting} = supervisedWorkerData<{greeting: string}>();
const hoard: number[][] = [];

// A stand-in for a parser of untrusted bytes: the supervisor's tests drive it into each failure.
serveSupervisedWork<MisbehavingWork, string>(async (work, emit) => {
  if (work.do === "echo") emit(`${greeting} ${work.text}`);
  else if (work.do === "throw") throw new Error("parser bug: Unknown type '3'");
  else if (work.do === "reject") await Promise.reject(new Error("async parser bug"));
  else if (work.do === "hang") for (;;);
  else for (;;) hoard.push(new Array<number>(1_000_000).fill(1));
});
