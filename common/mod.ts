/** Shared foundations: seeded PRNG, atomic files, validated configs, progress bars, CSV, flags, folder locks. */
export * from "./prng.ts";
export * from "./fs.ts";
export * from "./hash.ts";
export * from "./config.ts";
export * from "./progress.ts";
export * from "./csv.ts";
export * from "./args.ts";
export * from "./lock.ts";
export * from "./run_folder.ts";
export * from "./provenance.ts";
