// The one RL step (bench/engines/loop.ts) on a recording backend: which rows each update trains on and with what
// token weights (PSR/NSR on their subset alone, as Zhu et al.'s code), and the per-class error diagnostics.
import { assertClose, assertEquals, ok } from "../../assert.ts";
import { resolveAlgo } from "../../../bench/core/mod.ts";
import type { PolicyBackend, RolloutGroup } from "../../../bench/engines/engine.ts";
import { rlStep } from "../../../bench/engines/loop.ts";

interface Group extends RolloutGroup {
  ids: number[];
}

/** Two groups of 4 rollouts (ids 0–7) with lengths 1–3 tokens; records every update's rows and weights. */
function recordingBackend(correct: number[], classes?: string[]) {
  const lengths = [1, 2, 3, 1, 2, 3, 1, 2];
  const T = 3;
  const updates: { rows: number[]; weights: number[] }[] = [];
  const backend: PolicyBackend<Group, number[]> = {
    groupsPerStep: 2,
    maxResponseLength: T,
    miniBatches: 2,
    ppoEpochs: 1,
    sampleGroups: () =>
      Promise.resolve([0, 1].map((g) => {
        const ids = [0, 1, 2, 3].map((i) => g * 4 + i);
        return {
          ids,
          correct: ids.map((i) => correct[i]),
          lengths: ids.map((i) => lengths[i]),
          ...(classes ? { errorClasses: ids.map((i) => classes[i]) } : {}),
        };
      })),
    toBatch: (groups) => {
      const rows = groups.flatMap((g) => g.ids);
      const mask = new Float64Array(rows.length * T);
      rows.forEach((id, b) => mask.fill(1, b * T, b * T + lengths[id]));
      return { rows, B: rows.length, T, oldLogp: new Float64Array(rows.length * T), mask };
    },
    selectRows: (rows, indices) => indices.map((i) => rows[i]),
    refLogp: (batch) => Promise.resolve(new Float64Array(batch.B * T)),
    update: (mb, request) => {
      request.lossAt(new Float64Array(mb.B * T), new Float64Array(mb.B * T));
      updates.push({ rows: [...mb.rows], weights: [...request.weights] });
      return Promise.resolve(null);
    },
  };
  return { backend, updates, lengths, T };
}

const CORRECT = [1, 0, 0, 1, 0, 1, 1, 1];

Deno.test("psr trains on the correct rollouts alone: token mean over the subset, mini-batches of the full size", async () => {
  const { backend, updates, lengths, T } = recordingBackend(CORRECT);
  await rlStep(backend, resolveAlgo("psr"), 1);
  // 5 correct rows (0, 3, 5, 6, 7); the full batch's mini-batch is 8 / 2 = 4 rows, so ⌈5/4⌉ = 2 updates.
  assertEquals(updates.map((u) => u.rows).flat(), [0, 3, 5, 6, 7]);
  assertEquals(updates.length, 2);
  for (const u of updates) {
    ok(u.rows.length <= 4);
    const tokens = u.rows.reduce((s, id) => s + lengths[id], 0);
    // token-mean: every response token of the subset weighs 1/(its mini-batch's subset tokens); padding 0.
    u.rows.forEach((id, b) => {
      for (let t = 0; t < T; t++) assertClose(u.weights[b * T + t], t < lengths[id] ? 1 / tokens : 0, 1e-15);
    });
  }
});

Deno.test("nsr trains on the incorrect rollouts alone; grpo on every row in its two mini-batches", async () => {
  const nsr = recordingBackend(CORRECT);
  await rlStep(nsr.backend, resolveAlgo("nsr"), 1);
  assertEquals(nsr.updates.map((u) => u.rows), [[1, 2, 4]]); // 3 rows fit one mini-batch of 4
  const tokens = [1, 2, 4].reduce((s, id) => s + nsr.lengths[id], 0);
  assertClose(nsr.updates[0].weights[0], 1 / tokens, 1e-15);
  const grpo = recordingBackend(CORRECT);
  await rlStep(grpo.backend, resolveAlgo("grpo"), 1);
  assertEquals(grpo.updates.map((u) => u.rows), [[0, 1, 2, 3], [4, 5, 6, 7]]);
});

Deno.test("psr with no correct rollout skips the update and says why", async () => {
  const { backend, updates } = recordingBackend(Array(8).fill(0));
  const metrics = await rlStep(backend, resolveAlgo("psr"), 1);
  assertEquals(updates.length, 0);
  assertEquals(metrics.skipped, "no correct rollouts");
  assertEquals(metrics.accuracy, 0);
});

Deno.test("the step logs c per class of incorrect rollout when the backend classifies its rollouts", async () => {
  const classes = ["other", "shortcut", "other", "other", "shortcut", "other", "other", "other"];
  const { backend } = recordingBackend(CORRECT, classes);
  const metrics = await rlStep(backend, resolveAlgo("grpo"), 1);
  // incorrect: 1 (shortcut), 2 (other), 4 (shortcut); reference = policy here, so c = 0 for all.
  assertEquals([
    metrics.err_shortcut_n,
    metrics.err_other_n,
    metrics.err_shortcut_c,
    metrics.err_shortcut_overconf,
  ], [
    2,
    1,
    0,
    0,
  ]);
  const plain = await rlStep(recordingBackend(CORRECT).backend, resolveAlgo("grpo"), 1);
  ok(!("err_other_n" in plain));
});
