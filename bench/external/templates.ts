// Prompt templates for evaluation: a shipped name (the datasets' published formats) or a text file.
import { readFileSync } from "node:fs";
import { TEMPLATES } from "../../datasets/mod.ts";

/** A resolved template: its name (or file path) and its text with a `{problem}` placeholder. */
export interface PromptTemplate {
  name: string;
  text: string;
}

/** The template a dataset is usually evaluated with: DAPO's "Answer:" format for DAPO, `\boxed{}` otherwise. */
export function defaultTemplateFor(dataset: string): string {
  return dataset === "dapo-math-17k" ? "dapo-answer" : "boxed";
}

/**
 * Resolve `--prompt-template NAME|FILE`: a shipped name (dapo-answer, boxed, raw) or a path to a UTF-8 file whose
 * text contains `{problem}` exactly where the problem goes. Errors are one line naming the flag and what to pass.
 */
export function resolveTemplate(nameOrFile: string): PromptTemplate {
  const shipped = TEMPLATES[nameOrFile];
  if (shipped !== undefined) return { name: nameOrFile, text: shipped };
  let text: string;
  try {
    text = readFileSync(nameOrFile, "utf8");
  } catch {
    throw new Error(
      `--prompt-template: '${nameOrFile}' is neither a shipped template (${
        Object.keys(TEMPLATES).join(", ")
      }) ` +
        `nor a readable file`,
    );
  }
  if (!text.includes("{problem}")) {
    throw new Error(`--prompt-template ${nameOrFile}: the file has no {problem} placeholder`);
  }
  return { name: nameOrFile, text };
}

/** The prompt for one problem: the template with `{problem}` replaced (first occurrence, taken literally). */
export function applyTemplate(template: PromptTemplate, problem: string): string {
  return template.text.replace("{problem}", () => problem);
}
