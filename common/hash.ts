// Content hashes for checksums and config identities.
import { createHash } from "node:crypto";

/** Hex sha256 of a string or bytes. */
export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** JSON with object keys sorted recursively, so equal values serialise identically. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_k, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
        : v,
  );
}

/** Short stable hash of a config value (first 12 hex chars of sha256 over canonical JSON). */
export function configHash(value: unknown): string {
  return sha256(canonicalJson(value)).slice(0, 12);
}
