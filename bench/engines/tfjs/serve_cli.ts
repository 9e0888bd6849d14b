// `deno task serve --checkpoint DIR`: a tfjs checkpoint on 127.0.0.1 through the OpenAI-compatible API.
import { basename, resolve } from "node:path";
import { flagLines, type FlagTable, int, parseTable, str, UsageError } from "../../../common/args.ts";
import { exists } from "../../../common/fs.ts";
import { type PromptTemplate, resolveTemplate } from "../../../datasets/mod.ts";
import { initBackend } from "./backend.ts";
import { setThreads, threadsInUse } from "./ops/blas.ts";
import { threadsAsked } from "./settings.ts";
import { loadPolicy } from "./policy.ts";
import { COMPACT_TEMPLATE } from "./traces.ts";
import { serveModel, templateMisfit } from "./serve.ts";

/** The flags of `deno task serve`, declared once for parsing, --help and validation. */
export const FLAGS = {
  checkpoint: str(
    "DIR",
    "a run's checkpoints/ (latest step), one step-* folder, or one base of a sweep, base/<b>/ (required)",
  ),
  port: int("TCP port on 127.0.0.1 (0 = any free port)", { min: 0, max: 65535, default: 8000 }),
  model: str("NAME", "model id to serve (default: acebench-<checkpoint folder name>)"),
  backend: str(
    "NAME",
    "tfjs backend: auto (blas where the system BLAS loads, else wasm, else cpu) | blas | wasm | cpu | webgpu",
    { default: "auto" },
  ),
  "blas-threads": int(
    "on blas, threads that run the products (0 = one per core): large batches go faster on more; above 1 " +
      "the logits differ from one thread's in the last bits",
    { min: 0, max: 256, default: 1 },
  ),
  "prompt-template": str(
    "X",
    "the template eval will send (compact | dapo-answer | boxed | raw | FILE; compact: the engine's own " +
      'prompts such as "3+4*5=", the only ones a model trained from scratch reads): checked against the ' +
      "checkpoint's prompt length at start",
    { default: "compact" },
  ),
} as const satisfies FlagTable;

/** Usage text for `deno task serve`. */
export const usage = `usage: deno task serve --checkpoint DIR [flags]

Serves a tfjs-engine checkpoint on 127.0.0.1 through the OpenAI-compatible API (/v1/models, /v1/completions,
/v1/chat/completions; the parameters it implements are in docs/external-eval.md, any other is refused with a 400
naming it; a missing seed is 0). It refuses to start when the checkpoint's prompt length cannot hold the
template. Stop with Ctrl-C.

${flagLines(FLAGS)}

A checkpoint's prompt window is small (model.promptLength tokens, 12 by default; a longer prompt gets a 400 with
code context_length_exceeded): evaluate it on the synthetic tasks it was trained on (eval --dataset synthetic:DIR).

example:
  deno task serve --checkpoint out/demo/base/0 --port 8000 &
  deno task eval --endpoint http://127.0.0.1:8000/v1 --model acebench-0 --dataset synthetic:out/demo/base/0 \\
    --completions --n 8 --out out/eval-base0   # the sweep's held-out tasks, its sampling and grader`;

/** A shipped template by name, or a file's text; the error names the flag. */
function templateOf(nameOrFile: string): PromptTemplate {
  if (nameOrFile === COMPACT_TEMPLATE.name) return COMPACT_TEMPLATE;
  try {
    return resolveTemplate(nameOrFile);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

/** Entry point for \`deno task serve\`; runs until SIGINT/SIGTERM. */
export async function main(args: string[]): Promise<number> {
  const { values } = parseTable(args, FLAGS);
  if (!values.checkpoint) throw new UsageError("--checkpoint DIR is required");
  const dir = resolve(values.checkpoint);
  if (!exists(dir)) {
    throw new Error(
      `--checkpoint ${values.checkpoint}: no such folder; pass a run's checkpoints/ or a sweep's base/<b>/`,
    );
  }
  const template = templateOf(values["prompt-template"]);
  const threads = values["blas-threads"];
  const backend = await initBackend(values.backend);
  if (threads !== 1 && backend !== "blas") {
    throw new UsageError(`--blas-threads: only the blas backend has BLAS threads (backend is ${backend})`);
  }
  if (backend === "blas") await setThreads(threadsAsked(threads));
  const id = values.model ?? `acebench-${basename(dir)}`;
  const policy = loadPolicy(dir);
  const misfit = templateMisfit(policy, template);
  if (misfit) {
    throw new Error(`--checkpoint ${values.checkpoint}: ${misfit}`);
  }
  const { server, url } = serveModel(policy, id, values.port);
  const threadsNote = backend === "blas" ? `, ${threadsInUse().threads} BLAS thread(s)` : "";
  console.log(`serving '${id}' from ${dir} at ${url} (backend ${backend}${threadsNote}); Ctrl-C stops`);
  const { testSize, families, seed } = policy.settings.tasks;
  const templateFlag = template.name === COMPACT_TEMPLATE.name ? "" : ` --prompt-template ${template.name}`;
  console.log(
    `evaluate it on its sweep's held-out tasks (${testSize} problems; families ${families.join(", ")}; ` +
      `task seed ${seed}), with the sweep's temperature, top-p, max tokens and strict grader: deno task eval ` +
      `--endpoint ${url} --model ${id} --dataset synthetic:${dir}${templateFlag} --completions --n 16 --out DIR`,
  );
  const stop = () => server.shutdown();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  await server.finished;
  Deno.removeSignalListener("SIGINT", stop);
  Deno.removeSignalListener("SIGTERM", stop);
  return 0;
}
