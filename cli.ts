// The single command-line entry: `deno task <subcommand>` runs `cli.ts <subcommand> …`.
import { HelpRequested, UsageError } from "./common/args.ts";
import { ValidationError } from "./common/config.ts";
import { FolderInUseError } from "./common/lock.ts";

/** A subcommand module: prints its own usage on --help and returns an exit code. */
interface Command {
  usage: string;
  main(args: string[]): Promise<number>;
}

const commands: Record<string, { about: string; load: () => Promise<Command> }> = {
  fetch: {
    about: "download, verify and cache the datasets, and audit their golds",
    load: () => import("./commands/fetch.ts"),
  },
  sweep: {
    about: "run a training sweep (GRPO/DAPO vs ACE) and write its report",
    load: () => import("./commands/sweep.ts"),
  },
  eval: {
    about: "sample an OpenAI-compatible server on a dataset and grade it",
    load: () => import("./commands/eval.ts"),
  },
  serve: {
    about: "serve a tfjs checkpoint over an OpenAI-compatible API",
    load: () => import("./bench/engines/tfjs/serve_cli.ts"),
  },
  grade: {
    about: "grade predictions against gold answers (JSON lines)",
    load: () => import("./evaluators/cli.ts"),
  },
  report: {
    about: "write passk.csv, summary.md and plots for a sweep",
    load: () => import("./reports/cli.ts"),
  },
  findings: {
    about: "re-render (or --check) docs/findings.md's tables from the kept results in docs/results/",
    load: () => import("./reports/findings.ts"),
  },
  power: {
    about: "variance components and detectable differences of a sweep; size the next one",
    load: () => import("./reports/power.ts"),
  },
  regress: {
    about: "compare a sweep's Pass@k against a committed baseline",
    load: () => import("./reports/regress.ts"),
  },
  bench: {
    about: "speed benchmarks: grader | datasets | model | engine | tabular",
    load: () => import("./bench/perf/cli.ts"),
  },
};

/** Top-level usage text listing every subcommand. */
function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(8)} ${c.about}`);
  return `acebench: RLVR benchmark suite (ACE vs GRPO/DAPO)\n\nusage: deno task <command> [flags]   (or: deno run -A cli.ts <command> …)\n\ncommands:\n${
    lines.join("\n")
  }\n\nEvery command takes --help.`;
}

/** Run the CLI on raw arguments; returns the process exit code (2 for usage errors). */
async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(usage());
    return name ? 0 : 2;
  }
  const entry = commands[name];
  if (!entry) {
    console.error(`acebench: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  const command = await entry.load();
  try {
    return await command.main(rest);
  } catch (e) {
    if (e instanceof HelpRequested) {
      console.log(command.usage);
      return 0;
    }
    // A config the user passed that fails validation is their input to fix, like a bad flag: exit 2.
    if (e instanceof ValidationError || e instanceof FolderInUseError || e instanceof UsageError) {
      const help = e instanceof UsageError ? `\nsee \`deno task ${name} --help\`` : "";
      console.error(`acebench ${name}: ${e.message}${help}`);
      return 2;
    }
    const err = e as Error;
    console.error(`acebench ${name}: ${err.message?.split("\n")[0] ?? String(e)}`);
    if (Deno.env.get("ACEBENCH_DEBUG")) console.error(err.stack);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await runCli(Deno.args));
