import { assertEquals, ok, throws } from "../assert.ts";
import { readFileSync } from "node:fs";
import {
  BOXED_INSTRUCTION,
  DAPO_HEAD,
  DAPO_TAIL,
  renderPrompt,
  stripDapoTemplate,
  TEMPLATES,
} from "../../datasets/templates.ts";
import { HAVE_SHARED, SHARED } from "./helpers.ts";
import { missing, skipping } from "../external_inputs.ts";

const record = { problem: "What is $\\$1+\\$1$? Use $& and $1 literally.", template: "dapo-answer" };

Deno.test("templates: dapo-answer wraps the bare problem and strips back to it exactly", () => {
  const prompt = renderPrompt(record);
  assertEquals(prompt, DAPO_HEAD + record.problem + DAPO_TAIL);
  assertEquals(stripDapoTemplate(prompt), record.problem);
  assertEquals(stripDapoTemplate(record.problem), null);
});

Deno.test("templates: boxed and raw; an unknown name lists the known ones", () => {
  assertEquals(renderPrompt(record, "boxed"), `${record.problem}\n\n${BOXED_INSTRUCTION}`);
  assertEquals(
    BOXED_INSTRUCTION,
    "Please reason step by step, and put your final answer within \\boxed{}.",
  );
  assertEquals(renderPrompt(record, "raw"), record.problem);
  throws(
    () => renderPrompt(record, "chatml"),
    /unknown prompt template 'chatml' \(known: dapo-answer, boxed, raw\)/,
  );
  ok(Object.keys(TEMPLATES).length >= 3);
});

Deno.test({
  name: "templates: the DAPO template is the one quoted in ../shared/datasets/README.md",
  ignore: !HAVE_SHARED,
  fn() {
    const readme = readFileSync(`${SHARED}/README.md`, "utf8");
    // The README quotes it as string literals, so compare the JSON-escaped forms.
    ok(readme.includes(JSON.stringify(DAPO_HEAD)), "head");
    ok(readme.includes(JSON.stringify(DAPO_TAIL)), "tail");
  },
});
skipping(
  "the README template check",
  HAVE_SHARED ? null : missing("datasetMirror", `${SHARED}/SHA256SUMS not found`),
);
