import { assertEquals, ok, throws } from "../assert.ts";
import { ValidationError } from "../../common/config.ts";
import {
  checkSameProtocol,
  describeDesign,
  describeProtocol,
  designOf,
  type EvalProtocol,
  protocolTable,
  runRecordFrom,
  runRecordOf,
  type SweepRecord,
  sweepRecordOf,
} from "../../common/protocol.ts";

/** Throws a ValidationError whose message contains `text` (the error is shown when it does not). */
function refuses(fn: () => unknown, text: string): void {
  throws(fn, (e: Error) => {
    ok(e instanceof ValidationError && e.message.includes(text), `expected '${text}' in: ${e.message}`);
    return true;
  });
}

const protocol: EvalProtocol = {
  datasets: ["math500"],
  split: "test",
  template: "boxed",
  sampling: { sent: { temperature: 0.6, top_p: 0.95 }, serverDefaults: ["top_k", "min_p"] },
  grader: { mode: "strict", version: "abc123def456", timeoutMs: 2000 },
  n: 8,
  ks: [1, 8],
};
const record: SweepRecord = {
  version: 2,
  design: { kind: "bases", bases: 4, seedsPerBase: 2 },
  methods: [
    { name: "grpo", preset: "grpo", family: "standard", baseline: null },
    { name: "renamed", preset: "grpo", family: "ace", baseline: "grpo" },
  ],
  protocol,
};

Deno.test("protocol: a valid record is returned as is", () => {
  assertEquals(sweepRecordOf(record, "x/sweep.json"), record);
});

Deno.test("protocol: a record that does not match is refused, naming the file and the field", () => {
  const bad = structuredClone(record) as unknown as { protocol: { grader: { mode: string } } };
  bad.protocol.grader.mode = "lenient";
  refuses(
    () => sweepRecordOf(bad, "x/sweep.json"),
    "x/sweep.json: record: protocol.grader.mode: must be equal to one of the allowed values (strict, default, none)",
  );
  const noDesign = { ...record, design: { kind: "bases", bases: 2 } };
  refuses(() => sweepRecordOf(noDesign, "x/sweep.json"), "record: design");
  refuses(
    () => sweepRecordOf({ ...record, version: 3 }, "x/sweep.json"),
    "x/sweep.json: record.version: 3 is not the version this acebench reads (2)",
  );
});

Deno.test("protocol: different protocols are refused naming the field and both values, unless allowed", () => {
  const a = { label: "A", protocol };
  const b = {
    label: "B",
    protocol: { ...protocol, grader: { ...protocol.grader, mode: "default" as const } },
  };
  assertEquals(checkSameProtocol(a, { label: "B", protocol: structuredClone(protocol) }, false), []);
  refuses(
    () => checkSameProtocol(a, b, false),
    'evaluation protocol differs: grader.mode is "strict" in A but "default" in B; the numbers are not comparable',
  );
  const warned = checkSameProtocol(a, b, true);
  ok(
    warned.length === 1 && warned[0].startsWith("warning: evaluation protocol differs: grader.mode"),
    warned[0],
  );
  const sampled = {
    label: "C",
    protocol: { ...protocol, sampling: { ...protocol.sampling, sent: { temperature: 1 } } },
  };
  refuses(
    () => checkSameProtocol(a, sampled, false),
    "sampling.sent.temperature is 0.6 in A but 1",
  );
  const old = checkSameProtocol(a, { label: "old", protocol: null }, false);
  ok(old.length === 1 && old[0].includes("old: evaluation protocol written before"), old[0]);
});

Deno.test("protocol: stated grader mode first, and two protocols side by side with the differences marked", () => {
  const lines = describeProtocol(protocol);
  ok(lines[0].startsWith("- grader: strict (explicit answer markers only"), lines[0]);
  ok(lines[0].includes("`abc123def456`") && lines[0].includes("2000 ms per answer"), lines[0]);
  ok(lines[2].includes("left to the sampler's defaults: top_k, min_p"), lines[2]);
  const table = protocolTable(
    { label: "A", protocol },
    { label: "B", protocol: { ...protocol, grader: { ...protocol.grader, mode: "default" } } },
  );
  assertEquals(table[2], '| grader.mode | `"strict"` | `"default"` | ≠ |');
  ok(table.includes("| n | `8` | `8` |  |"), table.join("\n"));
  const half = protocolTable({ label: "A", protocol }, { label: "B", protocol: null });
  ok(half[2].includes("| `not recorded` | ≠ |"), half[2]);
});

Deno.test("protocol: a run's record is its method's entry and the protocol, validated on read", () => {
  const run = runRecordFrom(record, "renamed")!;
  assertEquals(run, { version: 2, method: record.methods[1], protocol });
  assertEquals(runRecordFrom(record, "absent"), null);
  assertEquals(runRecordOf(run, "r/config.json"), run);
  refuses(
    () => runRecordOf({ ...run, method: { ...run.method, family: "dapo" } }, "r/config.json"),
    "r/config.json: record: method.family: must be equal to one of the allowed values (ace, standard)",
  );
});

Deno.test("protocol: one design text, from a record or from a sweep config", () => {
  const bases = { kind: "bases", bases: 3, seedsPerBase: 2 } as const;
  assertEquals(designOf({ bases: 3, seedsPerBase: 2, seeds: undefined }), bases);
  assertEquals(designOf({ seeds: [1, 2] }), { kind: "seeds", seeds: [1, 2] });
  assertEquals(designOf({}), { kind: "seeds", seeds: [] });
  assertEquals(
    describeDesign(bases),
    "design: bases × seeds per base: 3 base model(s) (bases 0–2) × 2 seed(s) per base (RL seeds 0–1 within each " +
      "base), 6 run(s) per method",
  );
  assertEquals(
    describeDesign(designOf({ seeds: [] })),
    "design: seeds on one shared base model: seeds none recorded",
  );
});
