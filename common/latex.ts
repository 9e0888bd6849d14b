// LaTeX text helpers that both the datasets (reading answers out of published solutions) and the grader (reading
// answers out of model responses) need.

/** Index of the "}" that closes the "{" at `open` (escaped braces \{ \} skipped), or -1 if it never closes. */
export function matchBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i];
    if (ch === "\\") i++;
    else if (ch === "{") depth++;
    else if (ch === "}" && --depth === 0) return i;
  }
  return -1;
}
