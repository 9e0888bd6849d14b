// `deno task fetch`: datasets/cli.ts with the grader's gold audit plugged in (datasets/ cannot import the grader;
// a command may import both).
import { main as fetchMain, usage } from "../datasets/cli.ts";
import { auditGolds } from "../evaluators/audit.ts";

export { usage };

/** Entry point for `deno task fetch` (see datasets/cli.ts), auditing every fetched dataset's golds. */
export function main(args: string[]): Promise<number> {
  return fetchMain(args, auditGolds);
}
