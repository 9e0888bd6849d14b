import { assertEquals, ok, throws } from "../../../assert.ts";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  loadBundle,
  loadLatestCheckpoint,
  saveBundle,
  saveCheckpoint,
} from "../../../../bench/engines/tfjs/checkpoint.ts";

Deno.test("bundle: nested Float32Arrays and JSON round-trip bit-exactly", () => {
  const dir = Deno.makeTempDirSync();
  const weird = new Float32Array([0, -0, 1e-45, 3.4e38, Math.PI, NaN, -Infinity]);
  const value = {
    step: 3,
    rng: [1, -2, 3, 4],
    w: { a: { shape: [7], data: weird } },
    list: [new Float32Array(2)],
  };
  saveBundle(dir, value);
  const back = loadBundle<typeof value>(dir);
  assertEquals(back.step, 3);
  assertEquals(back.rng, [1, -2, 3, 4]);
  ok(back.w.a.data instanceof Float32Array);
  assertEquals(new Uint8Array(back.w.a.data.buffer), new Uint8Array(weird.buffer));
  assertEquals(back.list[0], new Float32Array(2));
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("bundle: missing or truncated files are errors naming the folder", () => {
  const dir = Deno.makeTempDirSync();
  throws(() => loadBundle(dir), /not a checkpoint/);
  saveBundle(dir, { x: new Float32Array(4) });
  writeFileSync(join(dir, "tensors.bin"), new Uint8Array(8));
  throws(() => loadBundle(dir), /truncated/);
  throws(() => saveBundle(dir, { x: new Float64Array(1) }), /only Float32Array/);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("checkpoints: latest.json points at the newest step, older steps are removed", () => {
  const root = Deno.makeTempDirSync();
  assertEquals(loadLatestCheckpoint(root), null);
  saveCheckpoint(root, 2, { w: new Float32Array([2]) });
  saveCheckpoint(root, 4, { w: new Float32Array([4]) });
  const latest = loadLatestCheckpoint<{ w: Float32Array }>(root)!;
  assertEquals(latest.step, 4);
  assertEquals([...latest.value.w], [4]);
  assertEquals(readdirSync(root).filter((e) => e.startsWith("step-")), ["step-000004"]);
  ok(existsSync(join(root, "latest.json")));
  Deno.removeSync(root, { recursive: true });
});
