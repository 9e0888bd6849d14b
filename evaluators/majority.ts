// maj@k: majority vote over extracted answers, clustered by the grader's equivalence (not string equality).
import { extractAnswer } from "./extract.ts";
import { grade, isEquivalent } from "./grade.ts";

/**
 * maj@k over the first k responses (k ≤ responses.length; default all): answers are extracted, clustered by
 * `isEquivalent`, the largest cluster wins (ties → the first-seen cluster) and its first answer is graded
 * against gold. Returns that answer, its votes and whether it is correct; responses without an answer do not
 * vote, and with no votes at all the answer is null and incorrect.
 */
export function majAtK(
  responses: readonly string[],
  gold: string,
  k = responses.length,
  options: { strict?: boolean } = {},
) {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`majAtK: k must be a positive integer, got ${k}`);
  if (k > responses.length) throw new RangeError(`majAtK: k=${k} > ${responses.length} responses`);
  const clusters: { answer: string; votes: number }[] = [];
  for (const r of responses.slice(0, k)) {
    const { answer } = extractAnswer(r, options);
    if (answer === null) continue;
    const hit = clusters.find((c) => isEquivalent(answer, c.answer));
    if (hit) hit.votes++;
    else clusters.push({ answer, votes: 1 });
  }
  if (clusters.length === 0) return { correct: false, answer: null, votes: 0 };
  const best = clusters.reduce((a, b) => (b.votes > a.votes ? b : a));
  return { correct: grade(`\\boxed{${best.answer}}`, gold).correct, answer: best.answer, votes: best.votes };
}
