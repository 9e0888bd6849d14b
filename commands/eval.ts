// Placeholder until the eval issue lands; replaced by the real command.
import { parseFlags } from "../common/args.ts";

/** Usage text for `deno task eval`. */
export const usage = "usage: deno task eval [--help]\n\n(not implemented yet)";

/** Entry point for `deno task eval`. */
export function main(args: string[]): Promise<number> {
  const { values } = parseFlags(args, {});
  if (values.help) {
    console.log(usage);
    return Promise.resolve(0);
  }
  console.error("acebench eval: not implemented yet");
  return Promise.resolve(1);
}
