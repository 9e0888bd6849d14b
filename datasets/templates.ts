// Prompt templates by name: the exact texts the datasets were published with, rendered around a bare problem.
import { readFileSync } from "node:fs";
import type { MathRecord } from "./record.ts";

/** DAPO-Math-17K's published wrapper (upstream prompt[0].content = head + problem + tail). */
export const DAPO_HEAD =
  "Solve the following math problem step by step. The last line of your response should be of the form Answer: $Answer (without quotes) where $Answer is the answer to the problem.\n\n";
/** The text DAPO appends after the problem. */
export const DAPO_TAIL = '\n\nRemember to put your answer on its own line after "Answer:".';

/** The boxed-answer instruction used for MATH-500 and AIME evaluation. */
export const BOXED_INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}.";

/** Template texts by name; `{problem}` marks where the bare problem goes. */
export const TEMPLATES: Readonly<Record<string, string>> = {
  "dapo-answer": `${DAPO_HEAD}{problem}${DAPO_TAIL}`,
  boxed: `{problem}\n\n${BOXED_INSTRUCTION}`,
  raw: "{problem}",
};

/** Render a prompt: the record's problem inside the named template (default: the record's own template). */
export function renderPrompt(
  record: Pick<MathRecord, "problem" | "template">,
  templateName?: string,
): string {
  const name = templateName ?? record.template;
  const text = TEMPLATES[name];
  if (text === undefined) {
    throw new Error(`unknown prompt template '${name}' (known: ${Object.keys(TEMPLATES).join(", ")})`);
  }
  return text.replace("{problem}", () => record.problem);
}

/** Strip DAPO's wrapper from an upstream prompt; returns null when the text is not wrapped in it. */
export function stripDapoTemplate(content: string): string | null {
  if (!content.startsWith(DAPO_HEAD) || !content.endsWith(DAPO_TAIL)) return null;
  return content.slice(DAPO_HEAD.length, content.length - DAPO_TAIL.length);
}

/** A resolved template: its name (or file path) and its text with a `{problem}` placeholder. */
export type PromptTemplate = ReturnType<typeof resolveTemplate>;

/**
 * Resolve `--prompt-template NAME|FILE`: a shipped name (dapo-answer, boxed, raw) or a path to a UTF-8 file whose
 * text contains `{problem}` exactly where the problem goes. Errors are one line naming the flag and what to pass.
 */
export function resolveTemplate(nameOrFile: string) {
  const shipped = TEMPLATES[nameOrFile];
  if (shipped !== undefined) return { name: nameOrFile, text: shipped };
  let text: string;
  try {
    text = readFileSync(nameOrFile, "utf8");
  } catch {
    const known = Object.keys(TEMPLATES).join(", ");
    throw new Error(
      `--prompt-template: '${nameOrFile}' is neither a shipped template (${known}) nor a readable file`,
    );
  }
  if (!text.includes("{problem}")) {
    throw new Error(`--prompt-template ${nameOrFile}: the file has no {problem} placeholder`);
  }
  return { name: nameOrFile, text };
}
