import { skipping } from "../external_inputs.ts";
import { assertEquals, ok, throws } from "../assert.ts";
import { appendJsonl, atomicWrite, readJsonl } from "../../common/fs.ts";
import { compileSchema, validate, ValidationError } from "../../common/config.ts";
import { fromCsv, toCsv } from "../../common/csv.ts";
import { canonicalJson, configHash } from "../../common/hash.ts";
import { tempDir } from "../temp.ts";

Deno.test("atomicWrite leaves no temp file and replaces content", () => {
  const dir = tempDir();
  atomicWrite(`${dir}/a/b.txt`, "one");
  atomicWrite(`${dir}/a/b.txt`, "two");
  assertEquals(Deno.readTextFileSync(`${dir}/a/b.txt`), "two");
  assertEquals([...Deno.readDirSync(`${dir}/a`)].map((e) => e.name), ["b.txt"]);
});

Deno.test("atomicWrite: an I/O error names the target file, not the temp file, and leaves no temp file", () => {
  const dir = tempDir();
  Deno.mkdirSync(`${dir}/a/taken`, { recursive: true });
  // The rename fails (the target is a folder): the error names the target.
  throws(() => atomicWrite(`${dir}/a/taken`, "x"), (e: Error) => {
    ok(e.message.startsWith(`${dir}/a/taken: cannot write (`), e.message);
    ok(!e.message.includes(".tmp"), e.message);
    return true;
  });
  assertEquals([...Deno.readDirSync(`${dir}/a`)].map((e) => e.name), ["taken"]);
  // The folder cannot exist (a file is in the way).
  Deno.writeTextFileSync(`${dir}/file`, "");
  throws(
    () => atomicWrite(`${dir}/file/x.json`, "x"),
    (e: Error) => e.message.startsWith(`${dir}/file/x.json: cannot write (`),
  );
});

// Root writes into a read-only folder anyway, so the case is checked only for other users.
Deno.test({
  name: "atomicWrite: a read-only folder is named with EACCES",
  ignore: skipping(
    "the read-only folder check",
    Deno.uid() === 0 ? "running as root, which may write there" : null,
  ),
}, () => {
  const dir = tempDir();
  Deno.mkdirSync(`${dir}/ro`);
  Deno.chmodSync(`${dir}/ro`, 0o555);
  try {
    throws(() => atomicWrite(`${dir}/ro/passk.csv`, "x"), (e: Error) => {
      ok(e.message.startsWith(`${dir}/ro/passk.csv: cannot write (EACCES`), e.message);
      ok(!e.message.includes(".tmp"), e.message);
      return true;
    });
  } finally {
    Deno.chmodSync(`${dir}/ro`, 0o755);
  }
});

Deno.test("readJsonl tolerates a torn last line but names a bad middle line", () => {
  const dir = tempDir();
  appendJsonl(`${dir}/x.jsonl`, [{ a: 1 }, { a: 2 }]);
  Deno.writeTextFileSync(`${dir}/x.jsonl`, '{"a":3', { append: true });
  assertEquals(readJsonl(`${dir}/x.jsonl`), [{ a: 1 }, { a: 2 }]);
  Deno.writeTextFileSync(`${dir}/y.jsonl`, '{"a":1}\n{oops\n{"a":2}\n');
  throws(() => readJsonl(`${dir}/y.jsonl`), /y\.jsonl:2/);
  assertEquals(readJsonl(`${dir}/missing.jsonl`), []);
});

Deno.test("validate names the source and the field, and fills defaults", () => {
  const v = compileSchema({
    type: "object",
    properties: {
      steps: { type: "integer", minimum: 1, default: 10 },
      methods: { type: "array", items: { enum: ["grpo", "ace"] } },
    },
    additionalProperties: false,
  });
  const cfg = validate<{ steps: number }>(v, {}, "cfg.json");
  assertEquals(cfg.steps, 10);
  throws(() => validate(v, { methods: ["grpo", "nope"] }, "cfg.json"), (e: Error) => {
    ok(e instanceof ValidationError);
    ok(e.message.startsWith("cfg.json: methods[1]: must be equal to one of the allowed values"), e.message);
    return true;
  });
  throws(
    () => validate(v, { stepz: 1 }, "c.json"),
    /c\.json: \(root\): must NOT have additional properties 'stepz'/,
  );
});

Deno.test("CSV round trip and canonical hashing", () => {
  const text = toCsv([{ a: 1, b: "x,y" }], ["a", "b"]);
  assertEquals(fromCsv(text), [{ a: "1", b: "x,y" }]);
  assertEquals(canonicalJson({ b: 1, a: { d: 2, c: 3 } }), '{"a":{"c":3,"d":2},"b":1}');
  assertEquals(configHash({ a: 1, b: 2 }), configHash({ b: 2, a: 1 }));
});
