// Prompt templates for evaluation: a shipped name (the datasets' published formats) or a text file.
import type { PromptTemplate } from "../../datasets/mod.ts";

/** The template a dataset is usually evaluated with: DAPO's "Answer:" format for DAPO, `\boxed{}` otherwise. */
export function defaultTemplateFor(dataset: string): string {
  return dataset === "dapo-math-17k" ? "dapo-answer" : "boxed";
}

/** The prompt for one problem: the template with `{problem}` replaced (first occurrence, taken literally). */
export function applyTemplate(template: PromptTemplate, problem: string): string {
  return template.text.replace("{problem}", () => problem);
}
