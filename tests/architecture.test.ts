// The shape of the tree, checked like Deno std checks its package graph: every relative import points down the
// pipeline, and every export is used somewhere (by another module, a test, or a mod.ts public API).
//
// Areas, lowest first (a file belongs to the area of its longest matching folder):
//   common → datasets, evaluators (side by side: evaluators never imports datasets)
//     → bench/core → bench/engines → bench/sweep
//       (bench/engines/<name>/ are separate engines: each may import bench/engines/*.ts, the engine contract,
//        never another engine; bench/external sits beside the engines and imports only common, datasets,
//        evaluators and bench/core; bench/perf, the speed benchmarks, and bench/*.ts may import all of bench)
//     → reports → commands → cli.ts, mod.ts (the root entry points import anything).
// A file may import its own area and the areas listed for it below. tests/ may import anything: it is not an
// area. An import is a static `import`/`export … from` (type-only included: a type is a dependency too) or a
// dynamic `import("literal")` whose specifier is relative and ends in .ts. `new URL("x.ts", import.meta.url)`
// (worker scripts, the engine registry's lazily loaded engines) is not an import: nothing is loaded at import
// time, which is what lets bench/engines/registry.ts name the engines without depending on them.
//
// Unused exports: a name exported by a non-test module must be imported by another module or test, be
// reachable from a mod.ts (directly, through `export … from`, or through `export * from`), be a type that an
// exported declaration of its module mentions (part of a public signature), or be one of ENTRY_POINTS. A
// dynamic `import("literal")` and `import * as ns` use every export of their target.
import { parse } from "@babel/parser";
import { dirname, join, relative, resolve } from "node:path";
import { assertEquals } from "./assert.ts";

/** One relative import of a module: the resolved target (repo-relative) and the names it takes ("*" = all). */
interface ModuleImport {
  target: string;
  names: string[] | "*";
  /** Re-exported by the importing module (`export { x } from`, `export * from`). */
  reexport: boolean;
}

/** A parsed module: its relative imports, the names it exports itself, the types its exports mention. */
interface ModuleInfo {
  path: string;
  imports: ModuleImport[];
  exports: string[];
  /** Type names referenced inside exported declarations (a type in a public signature is used by it). */
  signatureTypes: string[];
}

/** Exports used by name at run time rather than imported (a sweep loads an engine by `EngineSpec.exportName`). */
const ENTRY_POINTS = new Set(["tests/bench/sweep/fixtures/fake_engine.ts: fakeEngine"]);

const ALLOWED: Record<string, string[]> = {
  "common": [],
  "datasets": ["common"],
  "evaluators": ["common"],
  "bench/core": ["common", "datasets", "evaluators"],
  "bench/engines": ["common", "datasets", "evaluators", "bench/core"],
  "bench/engines/*": ["common", "datasets", "evaluators", "bench/core", "bench/engines"],
  "bench/sweep": ["common", "datasets", "evaluators", "bench/core", "bench/engines", "bench/engines/*"],
  "bench/external": ["common", "datasets", "evaluators", "bench/core"],
  "bench/perf": ["common", "datasets", "evaluators", "bench/*"],
  "bench": ["common", "datasets", "evaluators", "bench/*"],
  "reports": ["common", "datasets", "evaluators", "bench", "bench/*"],
  "commands": ["common", "datasets", "evaluators", "bench", "bench/*", "reports"],
  "cli.ts": ["*"],
  "mod.ts": ["*"],
};

/** The area of a repo-relative path ("bench/engines/tfjs" for bench/engines/tfjs/model/ops.ts), or null. */
function areaOf(path: string): string | null {
  if (path === "cli.ts" || path === "mod.ts") return path;
  const parts = path.split("/");
  if (parts[0] === "bench" && parts[1] === "engines" && parts.length > 3) return `bench/engines/${parts[2]}`;
  if (parts[0] === "bench" && parts.length > 2) return `bench/${parts[1]}`;
  if (["common", "datasets", "evaluators", "bench", "reports", "commands"].includes(parts[0])) {
    return parts[0];
  }
  return null;
}

/** Whether `area` may import `target` (both areas); patterns end in "/*" for every sub-area of a folder. */
function mayImport(area: string, target: string): boolean {
  if (area === target) return true;
  const rules = ALLOWED[area] ?? (area.startsWith("bench/engines/") ? ALLOWED["bench/engines/*"] : []);
  return rules.some((p) =>
    p === "*" || p === target || (p.endsWith("/*") && target.startsWith(p.slice(0, -1)))
  );
}

/** Every import that points up or sideways, as "file → target (area → area)". */
function layerViolations(modules: ModuleInfo[]): string[] {
  const out: string[] = [];
  for (const m of modules) {
    const from = areaOf(m.path);
    if (from === null) continue; // tests/ and files outside the areas
    for (const i of m.imports) {
      const to = areaOf(i.target);
      if (to === null) {
        out.push(`${m.path} → ${i.target}: imports a file outside every area`);
      } else if (!mayImport(from, to)) out.push(`${m.path} → ${i.target}: ${from} may not import ${to}`);
    }
  }
  return out;
}

/** Exports of non-test modules that nothing imports and no mod.ts exposes, as "file: name". */
function unusedExports(modules: ModuleInfo[]): string[] {
  const byPath = new Map(modules.map((m) => [m.path, m]));
  const used = new Set<string>(); // "path\0name"
  const mark = (path: string, name: string, seen = new Set<string>()) => {
    const key = `${path}\0${name}`;
    if (seen.has(key)) return;
    seen.add(key);
    used.add(key);
    // A re-export passes the use on to the module the name comes from.
    for (const i of byPath.get(path)?.imports ?? []) {
      if (!i.reexport) continue;
      if (i.names === "*" || i.names.includes(name)) mark(i.target, name, seen);
    }
  };
  const exportsOf = (path: string, seen = new Set<string>()): string[] => {
    if (seen.has(path)) return [];
    seen.add(path);
    const m = byPath.get(path);
    if (!m) return [];
    const star = m.imports.filter((i) => i.reexport && i.names === "*").flatMap((i) =>
      exportsOf(i.target, seen)
    );
    return [...m.exports, ...m.imports.flatMap((i) => i.reexport && i.names !== "*" ? i.names : []), ...star];
  };
  for (const m of modules) {
    if (m.path.endsWith("mod.ts")) { for (const name of exportsOf(m.path)) mark(m.path, name); }
    for (const i of m.imports) {
      if (i.reexport && !m.path.endsWith("mod.ts")) continue; // counted only when the re-export is used
      for (const name of i.names === "*" ? exportsOf(i.target) : i.names) mark(i.target, name);
    }
  }
  return modules.filter((m) => !m.path.endsWith(".test.ts")).flatMap((m) =>
    m.exports.filter((name) => !used.has(`${m.path}\0${name}`) && !m.signatureTypes.includes(name))
      .map((name) => `${m.path}: ${name}`)
      .filter((entry) => !ENTRY_POINTS.has(entry))
  );
}

/** Import cycles, one per back edge of a depth-first walk (none iff the graph is acyclic), as "a → b → a". */
function importCycles(modules: ModuleInfo[]): string[] {
  const next = new Map(modules.map((m) => [m.path, [...new Set(m.imports.map((i) => i.target))].sort()]));
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const found = new Set<string>();
  const visit = (path: string) => {
    state.set(path, "open");
    stack.push(path);
    for (const t of next.get(path) ?? []) {
      if (state.get(t) === "open") {
        const cycle = stack.slice(stack.indexOf(t));
        const start = cycle.indexOf([...cycle].sort()[0]);
        const turned = [...cycle.slice(start), ...cycle.slice(0, start)];
        found.add([...turned, turned[0]].join(" → "));
      } else if (!state.has(t)) visit(t);
    }
    stack.pop();
    state.set(path, "done");
  };
  for (const m of [...modules].sort((a, b) => a.path < b.path ? -1 : 1)) {
    if (!state.has(m.path)) visit(m.path);
  }
  return [...found].sort();
}

// deno-lint-ignore no-explicit-any
type Node = any;

/** Parse one TypeScript module (repo-relative `path`) into its relative .ts imports and its own exports. */
function parseModule(path: string, source: string): ModuleInfo {
  const ast = parse(source, { sourceType: "module", plugins: ["typescript"], errorRecovery: false });
  const imports: ModuleImport[] = [];
  const exports: string[] = [];
  const add = (specifier: unknown, names: string[] | "*", reexport: boolean) => {
    if (typeof specifier !== "string" || !/^\.\.?\//.test(specifier) || !specifier.endsWith(".ts")) return;
    imports.push({ target: join(dirname(path), specifier), names, reexport });
  };
  const nameOf = (n: Node): string => n.type === "StringLiteral" ? n.value : n.name;
  const signatureTypes = new Set<string>();
  const collectTypes = (n: Node, own: string) => {
    if (!n || typeof n.type !== "string") return;
    const named = n.type === "TSTypeReference" ? n.typeName : n.type.startsWith("TS") ? n.expression : null;
    if (named?.type === "Identifier" && named.name !== own) signatureTypes.add(named.name);
    for (const [k, v] of Object.entries(n)) {
      if (k === "loc" || k === "start" || k === "end") continue;
      if (Array.isArray(v)) v.forEach((c) => collectTypes(c, own));
      else if (v && typeof v === "object") collectTypes(v, own);
    }
  };
  for (const s of ast.program.body as Node[]) {
    if (s.type === "ImportDeclaration") {
      const ns = s.specifiers.some((x: Node) => x.type === "ImportNamespaceSpecifier");
      const names = s.specifiers.filter((x: Node) => x.type !== "ImportNamespaceSpecifier")
        .map((x: Node) => x.type === "ImportDefaultSpecifier" ? "default" : nameOf(x.imported));
      add(s.source.value, ns ? "*" : names, false);
    } else if (s.type === "ExportAllDeclaration") {
      add(s.source.value, "*", true);
    } else if (s.type === "ExportNamedDeclaration" && s.source) {
      add(s.source.value, s.specifiers.map((x: Node) => nameOf(x.local ?? x.exported)), true);
    } else if (s.type === "ExportNamedDeclaration" && s.declaration) {
      const d = s.declaration;
      if (d.type === "VariableDeclaration") exports.push(...d.declarations.map((v: Node) => v.id.name));
      else exports.push(d.id.name);
      collectTypes(d, d.id?.name ?? "");
    } else if (s.type === "ExportNamedDeclaration") {
      exports.push(...s.specifiers.map((x: Node) => nameOf(x.exported)));
    } else if (s.type === "ExportDefaultDeclaration") exports.push("default");
  }
  // Dynamic imports anywhere in the file: walk the tree for import("literal").
  const walk = (n: Node) => {
    if (!n || typeof n.type !== "string") return;
    if (n.type === "ImportExpression" || (n.type === "CallExpression" && n.callee?.type === "Import")) {
      const arg = n.source ?? n.arguments?.[0];
      if (arg?.type === "StringLiteral") add(arg.value, "*", false);
    }
    for (const v of Object.values(n)) {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object") walk(v);
    }
  };
  walk(ast.program);
  return { path, imports, exports: [...new Set(exports)], signatureTypes: [...signatureTypes] };
}

const repoRoot = resolve(new URL("..", import.meta.url).pathname);
const skipped = new Set(["node_modules", ".git", "out", "runs", "shared"]);

/** Every .ts file of the repository, repo-relative, sorted. */
function repoFiles(dir = repoRoot): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (e.name.startsWith(".") || skipped.has(e.name)) continue;
    const full = join(dir, e.name);
    if (e.isDirectory) out.push(...repoFiles(full));
    else if (e.isFile && e.name.endsWith(".ts")) out.push(relative(repoRoot, full));
  }
  return out.sort();
}

const tree = () => repoFiles().map((p) => parseModule(p, Deno.readTextFileSync(join(repoRoot, p))));

Deno.test("architecture: every relative import points down the pipeline", () => {
  assertEquals(layerViolations(tree()), []);
});

Deno.test("architecture: every export is imported somewhere or part of a mod.ts public API", () => {
  assertEquals(unusedExports(tree()), []);
});

Deno.test("architecture: no import cycles (type-only imports included)", () => {
  assertEquals(importCycles(tree()), []);
});

Deno.test("architecture checker: finds a two-module and a three-module cycle, not a diamond", () => {
  const modules = [
    parseModule("evaluators/a.ts", `import { b } from "./b.ts";\nexport const a = 1;`),
    parseModule("evaluators/b.ts", `import type { A } from "./a.ts";\nexport const b = 1;`),
    parseModule("evaluators/x.ts", `import { y } from "./y.ts";\nimport { z } from "./z.ts";`),
    parseModule("evaluators/y.ts", `import { z } from "./z.ts";`),
    parseModule("evaluators/z.ts", `export const z = 1;`),
    parseModule("common/p.ts", `import { q } from "./q.ts";`),
    parseModule("common/q.ts", `import { r } from "./r.ts";`),
    parseModule("common/r.ts", `export { p } from "./p.ts";`),
  ];
  assertEquals(importCycles(modules), [
    "common/p.ts → common/q.ts → common/r.ts → common/p.ts",
    "evaluators/a.ts → evaluators/b.ts → evaluators/a.ts",
  ]);
});

Deno.test("architecture checker: flags an upward, a sideways and an outside import, not a downward one", () => {
  const modules = [
    parseModule("common/a.ts", `import { step } from "../bench/core/step.ts";\nexport const a = step;`),
    parseModule("evaluators/b.ts", `import type { MathRecord } from "../datasets/record.ts";`),
    parseModule("bench/engines/tfjs/c.ts", `export { world } from "../tabular/world.ts";`),
    parseModule("bench/external/d.ts", `const m = await import("../sweep/runner.ts");`),
    parseModule("bench/engines/tabular/e.ts", `import { grade } from "../../../evaluators/grade.ts";`),
    parseModule("reports/f.ts", `import type { EvalSample } from "../common/run_folder.ts";`),
    parseModule("commands/g.ts", `import { x } from "../tests/assert.ts";`),
  ];
  assertEquals(layerViolations(modules), [
    "common/a.ts → bench/core/step.ts: common may not import bench/core",
    "evaluators/b.ts → datasets/record.ts: evaluators may not import datasets",
    "bench/engines/tfjs/c.ts → bench/engines/tabular/world.ts: bench/engines/tfjs may not import bench/engines/tabular",
    "bench/external/d.ts → bench/sweep/runner.ts: bench/external may not import bench/sweep",
    "commands/g.ts → tests/assert.ts: imports a file outside every area",
  ]);
});

Deno.test("architecture checker: an export nobody imports is flagged; imports, re-exports and mod.ts are uses", () => {
  const modules = [
    parseModule("common/x.ts", `export function used() {}\nexport function dead() {}\nexport type T = 1;`),
    parseModule(
      "common/w.ts",
      `export interface Opts {}\nexport function f(o: Opts) {}\nexport type Lone = 2;`,
    ),
    parseModule("common/y.ts", `export const viaMod = 1;\nexport interface Alone {}`),
    parseModule("common/z.ts", `export const viaStar = 1;`),
    parseModule("common/mod.ts", `export { viaMod } from "./y.ts";\nexport * from "./z.ts";`),
    parseModule(
      "tests/common/x.test.ts",
      `import { used, type T } from "../../common/x.ts";\nimport { f } from "../../common/w.ts";`,
    ),
  ];
  assertEquals(unusedExports(modules), ["common/x.ts: dead", "common/w.ts: Lone", "common/y.ts: Alone"]);
});

/** Run-folder file names only common/run_folder.ts may spell as a path (ARCHITECTURE.md, "Run folders"). */
const RUN_FOLDER_FILES = [
  "config.json",
  "status.json",
  "metrics.jsonl",
  "eval.jsonl",
  "samples.jsonl",
  "health.json",
  "sweep.json",
  "eval.json",
];

/**
 * String literals and template parts of a module that use a run-folder file name as a path: the whole literal,
 * or a literal ending in `/name` (prose that merely mentions a file, in usage text or messages, is allowed).
 */
function runFileLiterals(path: string, source: string): string[] {
  const ast = parse(source, { sourceType: "module", plugins: ["typescript"], errorRecovery: false });
  const names = RUN_FOLDER_FILES.map((n) => n.replace(".", "\\.")).join("|");
  const asPath = new RegExp(`(^|/)(${names})$`);
  const hits: string[] = [];
  const walk = (n: Node) => {
    if (!n || typeof n.type !== "string") return;
    const value = n.type === "StringLiteral"
      ? n.value
      : n.type === "TemplateElement"
      ? n.value?.cooked
      : null;
    if (typeof value === "string" && asPath.test(value)) {
      hits.push(`${path}:${n.loc?.start.line}: "${value}"`);
    }
    for (const v of Object.values(n)) {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object") walk(v);
    }
  };
  walk(ast.program);
  return hits;
}

Deno.test("architecture: only common/run_folder.ts names the run-folder files (the store)", () => {
  const offenders = repoFiles()
    .filter((p) => !p.startsWith("tests/") && p !== "common/run_folder.ts")
    .flatMap((p) => runFileLiterals(p, Deno.readTextFileSync(join(repoRoot, p))));
  assertEquals(offenders, []);
  // The check itself finds a literal path (so it cannot pass vacuously).
  assertEquals(
    runFileLiterals(
      "x.ts",
      'const a = join(dir, "status.json"), b = `${d}/eval.jsonl`, c = "see eval.jsonl";',
    ),
    ['x.ts:1: "status.json"', 'x.ts:1: "/eval.jsonl"'],
  );
});
