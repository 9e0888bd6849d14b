import { assertClose, assertEquals, throws } from "../../assert.ts";
import { groupAdvantages } from "../../../bench/core/mod.ts";

const close = (a: ArrayLike<number>, b: number[], tol = 1e-6) =>
  b.forEach((v, i) => assertClose(a[i], v, tol, `index ${i}`));

Deno.test("groupAdvantages: GRPO uses the Bessel std plus 1e-6", () => {
  // mean 0.5, std = sqrt(1/3) = 0.57735; 0.5 / (0.57735 + 1e-6) = 0.866024
  close(groupAdvantages([1, 0, 0, 1], [0, 0, 0, 0]), [0.866024, -0.866024, -0.866024, 0.866024]);
});

Deno.test("groupAdvantages: ±1 rewards equal 1/0 rewards with std normalisation, twice them without", () => {
  close(groupAdvantages([1, -1, -1, 1], [0, 0, 0, 0]), [0.866025, -0.866025, -0.866025, 0.866025]);
  close(groupAdvantages([1, 0, 0, 1], [0, 0, 0, 0], { normByStd: false, stdEps: 1e-6 }), [
    0.5,
    -0.5,
    -0.5,
    0.5,
  ]);
  close(groupAdvantages([1, -1, -1, 1], [0, 0, 0, 0], { normByStd: false, stdEps: 1e-6 }), [1, -1, -1, 1]);
});

Deno.test("groupAdvantages: interleaved groups, degenerate groups are exactly zero, singletons keep r", () => {
  const a = groupAdvantages([1, 0, 0, 0, 1, 1, 0.7], [0, 1, 0, 1, 2, 2, 9]);
  close(a, [0.707106, 0, -0.707106, 0, 0, 0, 0.7]);
  assertEquals([a[1], a[3], a[4], a[5]], [0, 0, 0, 0]);
  // float residue (0.1 + 0.2 vs 0.3) is not exactly degenerate, but the 1e-6 floor keeps it negligible
  const tiny = groupAdvantages([0.1 + 0.2, 0.3], [0, 0]);
  assertClose(tiny[0], 0, 1e-9, "float residue");
});

Deno.test("groupAdvantages: NaN rewards or non-integer ids are clear errors", () => {
  throws(() => groupAdvantages([1, NaN], [0, 0]), /rewards\[1\] is NaN/);
  throws(() => groupAdvantages([1, 0], [0, 0.5]), /groupIds\[1\]/);
  throws(() => groupAdvantages([1, 0], [0]), /groupIds has length 1; expected 2/);
});
