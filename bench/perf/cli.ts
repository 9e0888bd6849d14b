// `deno task bench <name>`: speed benchmarks, each owned by the area it measures.
import { HelpRequested, UsageError } from "../../common/args.ts";

const benches = {
  grader: {
    about: "grades/s and latency of the grader (single and gradeMany)",
    load: () => import("./grader.ts"),
  },
  datasets: { about: "time to load the cached datasets", load: () => import("./datasets.ts") },
  model: {
    about: "tfjs transformer train/sample tokens/s beside the PyTorch reference",
    load: () => import("./model.ts"),
  },
  engine: {
    about: "the tfjs engine (SFT, RL rollouts and updates) on each backend, side by side",
    load: () => import("./engine.ts"),
  },
  tabular: {
    about: "tabular engine steps/s and a grpo vs ace-grpo sweep timing",
    load: () => import("./tabular.ts"),
  },
};

/** Usage text for `deno task bench`. */
export const usage = `usage: deno task bench <name> [flags]\n\nbenchmarks:\n${
  Object.entries(benches).map(([n, b]) => `  ${n.padEnd(9)} ${b.about}`).join("\n")
}\n\nEach benchmark takes --help.`;

/** Entry point for `deno task bench`. */
export async function main(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  if (!name || name === "--help" || name === "-h") {
    console.log(usage);
    return name ? 0 : 2;
  }
  if (name.startsWith("-")) throw new UsageError(`unknown flag '${name}' (the benchmark name comes first)`);
  const bench = benches[name as keyof typeof benches];
  if (!bench) throw new UsageError(`unknown benchmark '${name}'`);
  const module = await bench.load();
  try {
    return await module.main(rest);
  } catch (e) {
    if (!(e instanceof HelpRequested)) throw e;
    console.log(module.usage);
    return 0;
  }
}
