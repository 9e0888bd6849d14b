// String-level normalisation of an extracted answer (after Minerva, MATH and Math-Verify; docs/references.md):
// spacing, text wrappers, units, currency, degrees, thousands separators and malformed-LaTeX repairs. The result
// is still LaTeX.
import { matchBrace } from "./extract.ts";

// Unit and filler words dropped after a number ("5 cm", "12 \text{ inches}^2"); plurals via an optional s.
const UNIT_WORDS = [
  "units?",
  "square",
  "sq",
  "cubic",
  "ways",
  "integers?",
  "dollars?",
  "cents?",
  "mph",
  "inch(?:es)?",
  "hours?",
  "hrs?",
  "minutes?",
  "mins?",
  "seconds?",
  "secs?",
  "days?",
  "weeks?",
  "months?",
  "years?",
  "km",
  "cm",
  "mm",
  "meters?",
  "metres?",
  "kilometers?",
  "centimeters?",
  "feet",
  "foot",
  "ft",
  "yards?",
  "miles?",
  "points?",
  "digits?",
  "degrees?",
  "pounds?",
  "lbs?",
  "grams?",
  "gm",
  "kg",
  "liters?",
  "litres?",
  "ml",
  "people",
  "students?",
  "times",
  "sides?",
  "cups?",
  "pieces?",
  "books?",
  "coins?",
  "marbles?",
  "apples?",
  "percentage points?",
];
const UNIT_TAIL = new RegExp(
  `^(.*?[0-9}a-zA-Z)])\\s*(?:(?:${UNIT_WORDS.join("|")})\\b(?:\\^\\{?[23]\\}?|²|³)?\\s*)+$`,
);
const TEXT_WRAPPERS =
  /\\(?:text|textbf|textit|textnormal|mathrm|mathbf|mathit|mbox|operatorname|textsf|mathsf)\s*\{/g;

// Replace `\cmd{content}` by content (brace-matched, so nested braces survive).
function unwrap(s: string, re: RegExp, map: (inner: string) => string = (x) => x): string {
  for (let guard = 0; guard < 50; guard++) {
    re.lastIndex = 0;
    const m = re.exec(s);
    if (!m) return s;
    const open = m.index + m[0].length - 1;
    const close = matchBrace(s, open);
    if (close < 0) return s.slice(0, m.index) + s.slice(open + 1);
    s = s.slice(0, m.index) + map(s.slice(open + 1, close)) + s.slice(close + 1);
  }
  return s;
}

/** a.b(c repeating) as an exact fraction: 0.\overline{3} = 1/3, 0.1\overline{6} = 1/6. */
function repeatingDecimal(whole: string, fixed: string, repeat: string): string {
  const all = BigInt((whole || "0") + fixed + repeat);
  const head = BigInt((whole || "0") + fixed);
  const den = (10n ** BigInt(repeat.length) - 1n) * 10n ** BigInt(fixed.length);
  return `\\frac{${all - head}}{${den}}`;
}

const ROW_BREAK = "\uE000"; // a private-use character no answer contains

/** Percent marker found (and removed) by `normalizeAnswer`: the value may mean v or v/100. */
export interface Normalized {
  text: string;
  percent: boolean;
}

/** Normalise an extracted LaTeX answer string; never throws. */
export function normalizeAnswer(raw: string): Normalized {
  // Matrix row breaks (\\) must survive the spacing clean-up below, which eats "\ " and "\,".
  let s = raw.replaceAll("\\\\", ROW_BREAK);
  s = s.replace(/\r?\n/g, " ");
  s = s.replace(/,\\!/g, "");
  s = s.replace(/\\(?:displaystyle|textstyle|limits|!|,|;|:|quad|qquad)/g, " ").replace(/\\ /g, " ").replace(
    /~/g,
    " ",
  );
  s = s.replace(/\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big)\s*(?=[()[\]|.]|\\[{}|]|\\[lr]?vert)/g, "");
  s = s.replace(/\\(?:left|right)\s*\./g, "");
  s = s.replace(/\\[dtc]frac/g, "\\frac");
  s = s.replace(/\\(?:neq|ne)\b/g, "\\ne").replace(/\\leq?(?:slant)?\b/g, "\\le").replace(
    /\\geq?(?:slant)?\b/g,
    "\\ge",
  );
  s = s.replace(/≤/g, "\\le").replace(/≥/g, "\\ge").replace(/≠/g, "\\ne").replace(/−/g, "-").replace(
    /×/g,
    "\\times",
  );
  s = s.replace(/π/g, "\\pi").replace(/∞/g, "\\infty").replace(/√/g, "\\sqrt").replace(/·/g, "\\cdot");
  // \text{ and } / \text{or} separate list items; other text wrappers just unwrap.
  s = unwrap(s, TEXT_WRAPPERS, (inner) => /^\s*(and|or)\s*$/i.test(inner) ? "," : inner);
  // Ordinals and quotes: 5^{\text{th}} → 5, “Navin” → Navin.
  s = s.replace(/(\d)\s*(?:\^\s*\{?\s*(?:st|nd|rd|th)\s*\}?|(?:st|nd|rd|th)\b)/g, "$1");
  s = s.replace(/^\s*["“'‘]+(.*?)["”'’]+\s*$/, "$1");
  s = s.replace(/(\d*)\.(\d*)\\overline\s*\{(\d+)\}/g, (_, a, b, c) => repeatingDecimal(a, b, c));
  s = s.replace(/\\(?:overline|underline|boxed|fbox|hat|vec)\s*\{/g, "{");
  s = s.replace(/(^|[^a-zA-Z])(and|or)(?=[^a-zA-Z]|$)/g, "$1,");
  s = s.replace(/\\\$|\$|€|£|\\euro\b/g, "");
  // Degrees inside a trig function are converted (sin 60° = √3/2); elsewhere the degree sign is dropped.
  s = s.replace(
    /\\(sin|cos|tan|cot|sec|csc)\s*(\(?)\s*(-?[0-9.]+)\s*(?:\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|°)\s*(\)?)/g,
    (whole, fn, open, deg, close) => (open && !close ? whole : `\\${fn}(${deg}\\pi/180)`),
  );
  s = s.replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|°|\\circ|\\degree/g, "");
  s = s.replace(/\{,\}/g, "");
  // An ellipsis stays a member ("1, 2, 3, \ldots" is not the finite list "1, 2, 3"), in one spelling.
  s = s.replace(/\\(?:ldots|cdots|dots|dotsc|dotsb)\b|\.\.\.|…/g, "\\ldots");
  s = s.replace(/\\(?:varnothing|emptyset)\b|\\\{\s*\\\}|∅/g, "\\emptyset");
  s = s.replace(/\b(?:infinity|inf)\b/gi, "\\infty");
  s = s.replace(/\\mathbb\s*\{?\s*R\s*\}?/g, "(-\\infty,\\infty)");
  let percent = false;
  s = s.replace(/\\%|%|\b(?:percent(?:age)?|pct)\b/gi, () => {
    percent = true;
    return "";
  });
  // Malformed LaTeX as models and graders write it: \frac12, \frac1{72}, \sqrt3, sqrt(x).
  s = s.replace(/\\frac\s*(\d)\s*(\d)/g, "\\frac{$1}{$2}").replace(/\\frac\s*(\d)\s*\{/g, "\\frac{$1}{");
  s = s.replace(/\\sqrt\s*(\d+|[a-zA-Z])/g, "\\sqrt{$1}");
  s = s.replace(/(^|[^\\a-zA-Z])sqrt\s*\(/g, "$1\\sqrt(");
  s = s.replace(/(^|[^\\a-zA-Z])pi(?![a-zA-Z])/g, "$1\\pi");
  s = s.replace(/\s+/g, " ").trim();
  s = s.replace(/[.。]+$/, "").trim();
  const unit = UNIT_TAIL.exec(s);
  if (unit && /[0-9]/.test(unit[1])) s = unit[1].trim();
  // A lone "m" is only a unit after a plain number ("5 m"); elsewhere it is a variable.
  s = s.replace(/^(-?[\d.]+)\s+m(?:\^\{?[23]\}?)?$/, "$1");
  s = s.replace(/^[a-zA-Z]*\s*\\approx\s*/, "");
  // Thousands separators only when the whole answer is one grouped number (a list "1,000" is rare; "1, 2" is not).
  if (/^-?\d{1,3}(?:(?:,|\s)\d{3})+(?:\.\d+)?$/.test(s)) s = s.replace(/[,\s]/g, "");
  s = s.replace(/(^|[^\d])\.(\d)/g, "$10.$2");
  // Trailing zeros of a decimal carry no value: 12.000 → 12, 2.50 → 2.5.
  s = s.replace(/(\d+)\.(\d*?)0+(?!\d)/g, (_, a, b) => b === "" ? a : `${a}.${b}`);
  return { text: s.replaceAll(ROW_BREAK, "\\\\"), percent };
}
