// acebench's grader as a long-lived JSON-lines process, for VERL's reward function (reward.py): each stdin line is
// a JSON array of {prediction, gold}; each stdout line is the matching array of {correct, status, extracted}.
// Every item is graded by the same worker pool, mode and per-answer timeout as the report's ingest (the sweep's
// recorded protocol, `gradingOf`), so the reward that trains is the verdict the report counts (one implementation).
import process from "node:process";
import { createInterface } from "node:readline";
import { GraderPool } from "../../../evaluators/pool.ts";
import type { GradeResult } from "../../../evaluators/grade.ts";
import { gradingOf } from "../registry.ts";

/** One verdict as reward.py reads it. */
export type RewardVerdict = Pick<GradeResult, "correct" | "status" | "extracted">;

/** Parse one request line into grading items; throws naming the line and the field. */
export function parseRequest(line: string, lineNo: number): { prediction: string; gold: string }[] {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    throw new SyntaxError(`reward_serve: stdin line ${lineNo}: invalid JSON (${(e as Error).message})`);
  }
  if (!Array.isArray(value)) throw new TypeError(`reward_serve: stdin line ${lineNo}: expected a JSON array`);
  return value.map((item, k) => {
    const it = item as Record<string, unknown> | null;
    if (typeof it?.prediction !== "string" || typeof it?.gold !== "string") {
      throw new TypeError(
        `reward_serve: stdin line ${lineNo}, item ${k}: "prediction" and "gold" must be strings`,
      );
    }
    return { prediction: it.prediction, gold: it.gold };
  });
}

/**
 * Answer request lines from `lines` until it ends, one response line per request, in order, in the mode and with
 * the hard per-answer limit of the sweep's recorded protocol in $ACEBENCH_SWEEP_DIR (else VERL's: strict, the
 * pool's timeout); `workers` the pool size (at least 1: the timeout needs one); `workerUrl` the grading worker's
 * module (default the checkout's; the bundled grader names its own).
 */
export async function serveRewards(
  lines: AsyncIterable<string>,
  write: (line: string) => Promise<void>,
  options: { workers?: number; workerUrl?: string } = {},
): Promise<number> {
  const { strict, timeoutMs } = gradingOf("verl", Deno.env.get("ACEBENCH_SWEEP_DIR") || null);
  const pool = new GraderPool(Math.max(1, options.workers ?? 1), options.workerUrl);
  let lineNo = 0;
  try {
    for await (const line of lines) {
      lineNo++;
      if (line.trim() === "") continue;
      const items = parseRequest(line, lineNo).map((it) => ({ ...it, strict }));
      const results = items.length ? await pool.grade(items, timeoutMs === null ? {} : { timeoutMs }) : [];
      // a RewardVerdict per item: only its fields, in this order
      await write(JSON.stringify(results, ["correct", "status", "extracted"]) + "\n");
    }
  } finally {
    pool.close();
  }
  return lineNo;
}

if (import.meta.main) {
  const encoder = new TextEncoder();
  const workers = Number(Deno.env.get("ACE_VERL_GRADER_WORKERS") ?? "1");
  try {
    // readline is linear in a line's length: a request line of hundreds of MB costs what reading it does
    await serveRewards(createInterface({ input: process.stdin, crlfDelay: Infinity }), async (line) => {
      const bytes = encoder.encode(line);
      for (let off = 0; off < bytes.length;) off += await Deno.stdout.write(bytes.subarray(off));
    }, {
      workers: Number.isInteger(workers) && workers > 0 ? workers : 1,
      // the bundled grader (grader_bundle.ts) runs its own bundled worker, beside it
      workerUrl: Deno.env.get("ACEBENCH_GRADE_WORKER") || undefined,
    });
  } catch (e) {
    console.error((e as Error).message);
    Deno.exit(1);
  }
}
