// Reference answers that sources publish inside a worked solution rather than in a field of their own: the last
// \boxed{…} of a MATH-style solution (Minerva Math, a user's file with only a `solution`) and GSM8K's "#### N".
import { matchBrace } from "../common/latex.ts";

/** The content of the last `\boxed{…}` (or `\fbox{…}`) in `text`, braces balanced; null if none closes. */
export function lastBoxed(text: string): string | null {
  const start = Math.max(text.lastIndexOf("\\boxed{"), text.lastIndexOf("\\fbox{"));
  if (start < 0) return null;
  const open = text.indexOf("{", start);
  const close = matchBrace(text, open);
  return close < 0 ? null : text.slice(open + 1, close).trim();
}

/** GSM8K's final answer: what follows the last "####", thousands separators removed ("2,125" → "2125"); null if absent. */
export function gsm8kAnswer(solution: string): string | null {
  const at = solution.lastIndexOf("####");
  if (at < 0) return null;
  const answer = solution.slice(at + 4).trim().replace(/(\d),(?=\d{3}\b)/g, "$1");
  return answer === "" ? null : answer;
}
