import { assertEquals, ok, throws } from "../assert.ts";
import { hash32, Rng } from "../../common/prng.ts";

Deno.test("Rng: same seed gives the same stream, different seeds differ", () => {
  const a = Rng.seeded(42), b = Rng.seeded(42), c = Rng.seeded(43);
  const xs = Array.from({ length: 5 }, () => a.float());
  assertEquals(xs, Array.from({ length: 5 }, () => b.float()));
  ok(xs[0] !== c.float());
  ok(xs.every((x) => x >= 0 && x < 1));
});

Deno.test("Rng: state round-trip continues bit-for-bit, including a pending normal", () => {
  const a = Rng.seeded(7);
  a.normal();
  const b = Rng.fromState(a.state());
  assertEquals([a.normal(), a.float(), a.int(10)], [b.normal(), b.float(), b.int(10)]);
});

Deno.test("Rng: split children are independent and reproducible", () => {
  const p1 = Rng.seeded(1), p2 = Rng.seeded(1);
  const c1 = p1.split(), d1 = p1.split();
  const c2 = p2.split();
  assertEquals(c1.float(), c2.float());
  ok(c1.float() !== d1.float());
  assertEquals(Rng.seeded(5).derive("x").float(), Rng.seeded(5).derive("x").float());
});

Deno.test("Rng: int, categorical and normal have the right ranges and moments", () => {
  const r = Rng.seeded(3);
  const counts = [0, 0, 0];
  for (let i = 0; i < 30000; i++) counts[r.categorical([1, 2, 7])]++;
  ok(Math.abs(counts[2] / 30000 - 0.7) < 0.02, `categorical ${counts}`);
  let s = 0, s2 = 0;
  for (let i = 0; i < 20000; i++) {
    const z = r.normal();
    s += z;
    s2 += z * z;
  }
  ok(Math.abs(s / 20000) < 0.03 && Math.abs(s2 / 20000 - 1) < 0.05);
  throws(() => r.int(0));
  assertEquals(hash32("abc"), hash32("abc"));
});

Deno.test("Rng: first draws of nearby small seeds are well spread (no ~1.0 start, no correlation)", () => {
  const firsts = Array.from({ length: 64 }, (_, s) => Rng.seeded(s).float());
  const mean = firsts.reduce((a, b) => a + b, 0) / firsts.length;
  ok(Math.abs(mean - 0.5) < 0.15, `mean of first draws ${mean}`);
  ok(firsts.filter((x) => x > 0.99).length <= 2, `${firsts}`);
  ok(new Set(firsts.map((x) => x.toFixed(3))).size > 55);
});
