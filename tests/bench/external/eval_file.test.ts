// `deno task eval --dataset FILE`: a user's .jsonl or .parquet problems against the scripted stand-in server,
// the default and explicit field choices, and one-line errors naming file, line and field.
import { assertEquals, ok, rejects } from "../../assert.ts";
import { join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { readJsonl } from "../../../common/fs.ts";
import { sha256 } from "../../../common/hash.ts";
import { main } from "../../../commands/eval.ts";
import type { EvalRow } from "../../../bench/external/mod.ts";
import { readFolderFile } from "../../../common/run_folder.ts";
import { startFaultServer } from "./fault_server.ts";
import { tempDir } from "../../temp.ts";

Deno.env.set("CI", "true"); // no progress bars in test output
const template = new URL("./fixtures/qa_template.txt", import.meta.url).pathname;

/** Right on sample 0 only, by looking the problem up in `gold`. */
function firstRight(gold: Map<string, string>) {
  return (prompt: string, _seed: number, i: number) => {
    const problem = prompt.match(/^Question: (.*)\n/)?.[1] ?? "";
    return i === 0 ? `so \\boxed{${gold.get(problem) ?? "?"}}` : "\\boxed{-1}";
  };
}

const args = (url: string, dataset: string, out: string, extra: string[] = []) => [
  "--endpoint",
  url,
  "--model",
  "test-model",
  "--dataset",
  dataset,
  "--n",
  "2",
  "--completions",
  "--prompt-template",
  template,
  "--out",
  out,
  ...extra,
];

Deno.test("eval --dataset FILE.jsonl: question + solution layout, gold from the last \\boxed{}, file recorded", async () => {
  const dir = tempDir();
  const path = join(dir, "my set.jsonl");
  const rows = [
    { question: "What is 2+3?", solution: "2+3 = \\boxed{5}." },
    { question: "What is 1/2 + 1/4?", solution: "First \\boxed{x}, then $\\boxed{\\frac{3}{4}}$" },
    { question: "What is 7*6?", solution: "\\boxed{42}" },
  ];
  Deno.writeTextFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const gold = new Map([["What is 2+3?", "5"], ["What is 1/2 + 1/4?", "\\frac{3}{4}"], [
    "What is 7*6?",
    "42",
  ]]);
  const srv = startFaultServer({ answer: firstRight(gold) });
  const out = join(dir, "out");
  try {
    assertEquals(await main(args(srv.url, path, out)), 0);
    const evalRows = readJsonl<EvalRow>(join(out, "runs/test-model/eval.jsonl"));
    assertEquals(evalRows.length, 6);
    ok(evalRows.every((r) => r.dataset === "file-my_set"), evalRows[0].dataset);
    assertEquals(
      [...new Set(evalRows.map((r) => `${r.problemId}=${r.gold}`))].sort(),
      ["file-my_set/1=5", "file-my_set/2=\\frac{3}{4}", "file-my_set/3=42"],
    );
    assertEquals(evalRows.filter((r) => r.correct).map((r) => r.sample), [0, 0, 0]);
    const record = readFolderFile(out)!.record!;
    assertEquals(record.protocol.datasets, ["file-my_set"]);
    const sum = sha256(Deno.readFileSync(path)).slice(0, 12);
    assertEquals(
      record.protocol.split,
      `file ${path} (sha256 ${sum}; problem from question, answer from solution:boxed)`,
    );
    // The file changed: its samples are not the old file's, and the folder says so.
    Deno.writeTextFileSync(path, JSON.stringify({ question: "What is 1+1?", answer: "2" }) + "\n");
    await rejects(
      main(args(srv.url, path, out)),
      /holds samples made with different settings \(model, dataset or its file/,
    );
  } finally {
    await srv.close();
  }
});

Deno.test("eval --dataset FILE.parquet with --problem-key and --answer-key", async () => {
  const dir = tempDir();
  const path = join(dir, "set.parquet");
  const columnData = [
    { name: "q", data: ["What is 9-4?", "What is 3^2?"], type: "STRING" },
    { name: "gold", data: ["5", "9"], type: "STRING" },
  ];
  // deno-lint-ignore no-explicit-any
  Deno.writeFileSync(path, new Uint8Array(parquetWriteBuffer({ columnData } as any)));
  const gold = new Map([["What is 9-4?", "5"], ["What is 3^2?", "9"]]);
  const srv = startFaultServer({ answer: firstRight(gold) });
  const out = join(dir, "out");
  try {
    assertEquals(
      await main(args(srv.url, path, out, ["--problem-key", "q", "--answer-key", "gold", "--k", "1,2"])),
      0,
    );
    const evalRows = readJsonl<EvalRow>(join(out, "runs/test-model/eval.jsonl"));
    assertEquals(evalRows.map((r) => [r.problemId, r.gold, r.correct]).sort(), [
      ["file-set/1", "5", false],
      ["file-set/1", "5", true],
      ["file-set/2", "9", false],
      ["file-set/2", "9", true],
    ]);
  } finally {
    await srv.close();
  }
});

Deno.test("eval --dataset FILE: a bad row or field is one line naming file, line and field", async () => {
  const dir = tempDir();
  const write = (name: string, lines: unknown[]) => {
    const path = join(dir, name);
    Deno.writeTextFileSync(path, lines.map((l) => typeof l === "string" ? l : JSON.stringify(l)).join("\n"));
    return path;
  };
  const out = join(dir, "out");
  const run = (path: string, extra: string[] = []) => main(args("http://127.0.0.1:9/v1", path, out, extra));
  const noAnswer = write("a.jsonl", [{ problem: "P1", answer: "1" }, { problem: "P2" }]);
  await rejects(
    run(noAnswer),
    new RegExp(`${noAnswer}:2: field 'answer' is missing, expected the answer \\(--answer-key\\)$`),
  );
  const noProblem = write("b.jsonl", [{ text: "P1", answer: "1" }]);
  await rejects(
    run(noProblem),
    /b\.jsonl:1: no 'problem' or 'question' field \(fields: text, answer\); name it with --problem-key/,
  );
  await rejects(
    run(noProblem, ["--problem-key", "txt"]),
    /b\.jsonl:1: field 'txt' is missing, expected the problem text/,
  );
  const worked = write("c.jsonl", [{ question: "Q", answer: "Add them.\n#### 12" }]);
  await rejects(
    run(worked),
    /c\.jsonl:1: field 'answer' holds a worked solution, not a final answer; use --answer-key answer:boxed or answer:gsm8k/,
  );
  const torn = write("d.jsonl", [{ problem: "P", answer: "1" }, '{"problem": "Q", "ans']);
  await rejects(run(torn), /d\.jsonl:2: invalid JSON/);
  await rejects(run(join(dir, "none.jsonl")), /none\.jsonl: cannot read/);
  await rejects(
    main([
      "--endpoint",
      "http://127.0.0.1:9/v1",
      "--model",
      "m",
      "--dataset",
      "math500",
      "--problem-key",
      "q",
      "--out",
      out,
    ]),
    /--problem-key: only with --dataset FILE/,
  );
  await rejects(
    run(worked, ["--answer-key", "answer:last"]),
    /--answer-key answer:last: unknown mode 'last'/,
  );
});

Deno.test("eval --dataset FILE: results name the file's ids; repeats refused or kept once; --out that is a file", async () => {
  const dir = tempDir();
  const path = join(dir, "ids.jsonl");
  const rows = [
    { unique_id: "alg/1", question: "What is 2+3?", answer: "5" },
    { unique_id: "alg/2", question: "What is 7*6?", answer: "42" },
    { unique_id: "alg/3", question: "What is 2+3?", answer: "5" },
  ];
  Deno.writeTextFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const srv = startFaultServer({
    answer: firstRight(new Map([["What is 2+3?", "5"], ["What is 7*6?", "42"]])),
  });
  const out = join(dir, "out");
  try {
    await rejects(
      main(args(srv.url, path, out)),
      /ids\.jsonl:3 repeats line 1 \(the same problem text\); remove them, or pass --duplicates keep-first/,
    );
    await rejects(
      main(args(srv.url, path, out, ["--duplicates", "twice"])),
      /--duplicates: expected one of refuse, keep-first, got 'twice'/,
    );
    const lines: string[] = [], original = console.error;
    console.error = (...a: unknown[]) => lines.push(a.join(" "));
    try {
      assertEquals(await main(args(srv.url, path, out, ["--duplicates", "keep-first"])), 0);
    } finally {
      console.error = original;
    }
    ok(
      lines.some((l) => l.includes("left out 1 repeated problem(s)") && l.includes("ids.jsonl:3")),
      lines.join("\n"),
    );
    const evalRows = readJsonl<EvalRow>(join(out, "runs/test-model/eval.jsonl"));
    assertEquals([...new Set(evalRows.map((r) => r.problemId))], ["file-ids/alg/1", "file-ids/alg/2"]);
    const split = readFolderFile(out)!.record!.protocol.split;
    ok(split.includes("id from unique_id; repeats left out"), split);
    // An --out that is a file is one line saying so, for eval and sweep alike, and the file is untouched.
    const file = join(dir, "README.md");
    Deno.writeTextFileSync(file, "mine\n");
    await rejects(
      main(args(srv.url, path, file, ["--duplicates", "keep-first"])),
      /--out .*README\.md: a file, not a folder/,
    );
    const { main: sweepMain } = await import("../../../commands/sweep.ts");
    await rejects(
      sweepMain(["--preset", "ci-tabular", "--out", file]),
      /--out .*README\.md: a file, not a folder/,
    );
    assertEquals(Deno.readTextFileSync(file), "mine\n");
  } finally {
    await srv.close();
  }
});
