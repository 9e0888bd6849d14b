// deno.json's test tasks: `test` (the suite a newcomer runs) and `test:e2e` (the end-to-end sweeps, engines, VERL
// loops, real servers and full-data files) split tests/ between them with one list, every file exists, test:fast
// leaves out at least what `test` does, and the README and .ci/run name both tasks.
import { existsSync, readFileSync } from "node:fs";
import { assertEquals, ok } from "./assert.ts";

const root = new URL("../", import.meta.url);
const read = (rel: string) => readFileSync(new URL(rel, root), "utf8");
const tasks = JSON.parse(read("deno.json")).tasks as Record<string, string>;
const ignored = (task: string) => (tasks[task].match(/--ignore=(\S+)/)?.[1] ?? "").split(",").filter(Boolean);

Deno.test("test tasks: test:e2e runs exactly the files test leaves out; test:fast leaves out those too", () => {
  const e2e = tasks["test:e2e"].split(" ").filter((w) => w.startsWith("tests/"));
  ok(e2e.length > 0, tasks["test:e2e"]);
  assertEquals([...ignored("test")].sort(), [...e2e].sort());
  ok(tasks.test.trim().endsWith(" tests/"), tasks.test);
  for (const file of e2e) ok(existsSync(new URL(file, root)), `${file} (deno.json) does not exist`);
  for (const file of ignored("test:fast")) {
    ok(existsSync(new URL(file, root)), `${file} (deno.json) does not exist`);
  }
  const fast = new Set(ignored("test:fast"));
  ok(e2e.every((f) => fast.has(f)), "test:fast runs an end-to-end file");
  const flags = (task: string) => tasks[task].split(" ").filter((w) => w.startsWith("--allow")).sort();
  assertEquals(flags("test:e2e"), flags("test"), "both tasks run with the same permissions");
});

Deno.test("test tasks: the README and .ci/run name both", () => {
  const readme = read("README.md"), ci = read(".ci/run");
  ok(/task test\b/.test(readme) && readme.includes("test:e2e"), "README");
  ok(/for task in test test:e2e; do/.test(ci), ".ci/run runs both tasks");
});
