// Checkpoints: any JSON-like value whose Float32Arrays (weights, Adam moments) go to one binary file, so
// restoring gives the exact same bits. A checkpoint folder holds `state.json` + `tensors.bin`; a run's
// `checkpoints/latest.json` names the newest complete one (written last, atomically).
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { atomicWrite, exists, readJson, writeJson } from "../../../common/fs.ts";

/** Write `value` to `dir` (created if needed); Float32Arrays anywhere inside are stored bit-exactly. */
export function saveBundle(dir: string, value: unknown): void {
  const chunks: [Float32Array, number][] = [];
  let offset = 0;
  const json = JSON.stringify(value, (_k, v) => {
    if (v instanceof Float32Array) {
      chunks.push([v, offset]);
      offset += v.length;
      return { $f32: [offset - v.length, v.length] }; // a reference: [offset in floats, length]
    }
    if (ArrayBuffer.isView(v)) {
      throw new Error(`saveBundle: only Float32Array is supported, got ${v.constructor.name}`);
    }
    return v;
  });
  const bin = new Float32Array(offset);
  for (const [c, at] of chunks) bin.set(c, at);
  mkdirSync(dir, { recursive: true });
  atomicWrite(join(dir, "tensors.bin"), new Uint8Array(bin.buffer));
  atomicWrite(join(dir, "state.json"), json + "\n");
}

/** Read a bundle written by `saveBundle`; the error names the folder when a file is missing or truncated. */
export function loadBundle<T>(dir: string): T {
  const statePath = join(dir, "state.json"), binPath = join(dir, "tensors.bin");
  if (!exists(statePath) || !exists(binPath)) {
    throw new Error(`${dir}: not a checkpoint (state.json or tensors.bin missing)`);
  }
  const bytes = readFileSync(binPath);
  if (bytes.byteLength % 4 !== 0) throw new Error(`${binPath}: truncated (${bytes.byteLength} bytes)`);
  const bin = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return JSON.parse(readFileSync(statePath, "utf8"), (_k, v) => {
    if (v && typeof v === "object" && Array.isArray(v.$f32)) {
      const [off, len] = v.$f32 as [number, number];
      if (off + len > bin.length) {
        throw new Error(`${binPath}: truncated (tensor at ${off}+${len} > ${bin.length})`);
      }
      return bin.slice(off, off + len);
    }
    return v;
  }) as T;
}

/** Save a run checkpoint for `step` under `<root>/step-<n>/`, point `latest.json` at it, drop older ones. */
export function saveCheckpoint(root: string, step: number, value: unknown): void {
  const name = `step-${String(step).padStart(6, "0")}`;
  saveBundle(join(root, name), value);
  writeJson(join(root, "latest.json"), { step, dir: name });
  for (const entry of readdirSync(root)) {
    if (entry.startsWith("step-") && entry !== name) {
      rmSync(join(root, entry), { recursive: true, force: true });
    }
  }
}

/** The newest checkpoint under `root` as `{ step, value }`, or null when there is none. */
export function loadLatestCheckpoint<T>(root: string): { step: number; value: T } | null {
  const latest = join(root, "latest.json");
  if (!exists(latest)) return null;
  const { step, dir } = readJson<{ step: number; dir: string }>(latest);
  return { step, value: loadBundle<T>(join(root, dir)) };
}
