// `deno task bench engine`: the tfjs engine itself (SFT steps, RL rollouts and updates) on each backend asked
// for, in one invocation, on the default sweep's model and batch sizes.
import { bool, flagLines, type FlagTable, num, parseTable, str, UsageError } from "../../common/args.ts";
import { Rng } from "../../common/prng.ts";
import { resolveAlgo } from "../core/mod.ts";
import { gradingOf } from "../engines/registry.ts";
import { BACKENDS, trainsDataParallel } from "../engines/tfjs/backend.ts";
import {
  createModel,
  createOptimizer,
  disposeModel,
  getWeightsAsync,
  setWeights,
} from "../engines/tfjs/model.ts";
import { rlStep } from "../engines/tfjs/rl.ts";
import {
  modelConfig,
  presetSettings,
  SETTINGS_PRESETS,
  settingsTokenizer,
  taskSets,
  type TfjsSettings,
} from "../engines/tfjs/settings.ts";
import { parallelSampling } from "../engines/tfjs/parallel.ts";
import { initEngineBackend } from "../engines/tfjs/auto.ts";
import { sftWorkers, trainSft } from "../engines/tfjs/sft.ts";

/** The flags of `deno task bench engine`, declared once for parsing, --help and validation. */
export const FLAGS = {
  settings: str("NAME", "settings preset", { default: "default", choices: SETTINGS_PRESETS }),
  backends: str(
    "LIST",
    `comma-separated, from ${BACKENDS.join(", ")}; auto reports its decision (calibrated against webgpu ` +
      "where a WebGPU adapter exists)",
    { default: "blas,wasm,webgpu" },
  ),
  "sample-workers": num(
    "data-parallel sampling workers on wasm and cpu (default: the settings' sampleWorkers)",
    { min: 0, max: 64 },
  ),
  "sft-steps": num("timed SFT steps", { default: 10, min: 1, max: 10_000 }),
  "rl-steps": num("timed RL steps", { default: 3, min: 1, max: 1000 }),
  tiny: bool("the same as --settings tiny"),
} as const satisfies FlagTable;

/** Usage text for `deno task bench engine`. */
export const usage = `usage: deno task bench engine [flags]

Runs the tfjs engine on a settings preset (default: the default sweep's settings, width 64, 2 layers; SFT
batch 32; RL 8 prompts x 8 rollouts, 2 mini-batches, GRPO; gpu: width 512, 8 layers, context 256, SFT batch
128, RL 32 x 8 rollouts) on each backend of LIST, one after another in this process:
  sft  sequences/s over --sft-steps steps, after 2 warm-up steps (data-parallel on wasm/cpu, as the engine)
  rl   seconds per step over --rl-steps steps after 1 warm-up: rollout generation (generated tokens/s) and the
       update (reference log-probs plus the policy-loss passes; response tokens/s)
A backend that cannot start, or fails while measured, is reported and skipped.

${flagLines(FLAGS)}`;

/** One backend's figures. */
type EngineRate = { backend: string; decision?: unknown } & Awaited<ReturnType<typeof measure>>;

/** Time the engine on the active backend: SFT from a fresh model, then RL steps from that model. */
async function measure(s: TfjsSettings, sftSteps: number, rlSteps: number) {
  const tok = settingsTokenizer(s), { train } = taskSets(s), rng = Rng.seeded(0);
  const model = createModel(modelConfig(s, tok), rng.derive("init"));
  const sft = (steps: number) => trainSft(model, tok, train, { ...s, sft: { ...s.sft, steps } }, rng);
  await sft(2);
  let t0 = performance.now();
  await sft(sftSteps);
  const sftSeconds = (performance.now() - t0) / 1000;

  using sampling = await parallelSampling(s, model);
  const ref = createModel(modelConfig(s, tok), rng.derive("ref"));
  setWeights(ref, await getWeightsAsync(model));
  const opt = createOptimizer(model, { lr: s.rl.lr, clipNorm: s.rl.clipNorm });
  const grader = gradingOf("tfjs", null, s as unknown as Record<string, unknown>); // as a sweep grades
  const algo = resolveAlgo("grpo");
  const ctx = { model, ref, opt, tok, train, settings: s, algo, rng: rng.derive("rl"), grader };
  await rlStep(ctx, 0);
  let sampleS = 0, updateS = 0, generated = 0;
  t0 = performance.now();
  for (let step = 1; step <= rlSteps; step++) {
    const m = await rlStep(ctx, step);
    sampleS += m.sample_s as number;
    updateS += m.update_s as number;
    generated += (m.response_len as number) * s.rl.promptsPerStep * s.rl.groupSize;
  }
  const rlSeconds = (performance.now() - t0) / 1000;
  disposeModel(model);
  disposeModel(ref);
  return {
    sft_workers: sftWorkers(s),
    sample_workers: sampling.workers,
    sft_seq_per_s: Math.round(sftSteps * s.sft.batchSize / sftSeconds),
    rl_s_per_step: +(rlSeconds / rlSteps).toFixed(3),
    rl_sample_tokens_per_s: Math.round(generated / sampleS),
    rl_update_tokens_per_s: Math.round(generated / updateS),
  };
}

/** Entry point for `deno task bench engine`. */
export async function main(args: string[]): Promise<number> {
  const { values } = parseTable(args, FLAGS);
  const backends = values.backends.split(",").map((b) => b.trim());
  const bad = backends.find((b) => !(BACKENDS as readonly string[]).includes(b));
  if (bad !== undefined) throw new UsageError(`--backends: '${bad}' is not one of ${BACKENDS.join(", ")}`);
  const sftSteps = values["sft-steps"], rlSteps = values["rl-steps"];
  const preset = values.tiny ? "tiny" : values.settings;
  const results: (EngineRate | { backend: string; unavailable: string })[] = [];
  for (const backend of backends) {
    const s = { ...presetSettings(preset), backend: backend as TfjsSettings["backend"] };
    if (values["sample-workers"] !== undefined) s.sampleWorkers = values["sample-workers"];
    let started = false;
    try {
      const decision = await initEngineBackend(backend, modelConfig(s, settingsTokenizer(s)));
      if (backend === "auto") console.log(`auto       ${JSON.stringify(decision)}`);
      started = true;
      const r: EngineRate = { backend, decision, ...(await measure(s, sftSteps, rlSteps)) };
      const rl = `rl ${r.rl_s_per_step} s/step (${r.sample_workers} sampling worker(s))`;
      console.log(
        `${backend.padEnd(10)} sft ${r.sft_seq_per_s} seq/s (${r.sft_workers} worker(s)); ${rl}: ` +
          `sample ${r.rl_sample_tokens_per_s} tok/s, update ${r.rl_update_tokens_per_s} tok/s`,
      );
      results.push(r);
    } catch (e) {
      // A backend that cannot start, or fails inside (e.g. the gpu preset's batches outgrowing the 4 GB wasm
      // heap on a CPU backend, measured), is that backend's result; the others still run.
      const hint = started && trainsDataParallel() && preset === "gpu"
        ? " (the gpu preset needs a GPU backend)"
        : "";
      const why = `${(e as Error).message.split("\n")[0]}${hint}`;
      console.log(`${backend.padEnd(10)} ${started ? "failed" : "unavailable"}: ${why}`);
      results.push({ backend, unavailable: why });
    }
  }
  console.log(JSON.stringify({ settings: preset, sftSteps, rlSteps, load: Deno.loadavg(), results }));
  return 0;
}
