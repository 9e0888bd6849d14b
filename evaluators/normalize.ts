// String-level normalisation of an extracted answer as one ordered table of named rewrite rules, after
// Minerva's normalize_final_answer (Lewkowycz et al. 2022, "Solving Quantitative Reasoning Problems with
// Language Models", appendix D): spacing, text wrappers, units, currency, degrees, thousands separators,
// malformed-LaTeX repairs, and text as other tools deliver it. The result is still LaTeX; the rules that
// changed the answer are reported, so `--explain` can say why two answers matched.
import { matchBrace } from "../common/latex.ts";
import { currencyUnit, parseUnit, type Unit } from "./units.ts";

// Unit and filler words dropped after a number ("5 cm", "12 \text{ inches}^2"); plurals via an optional s.
const UNIT_WORDS =
  "units?|square|sq|cubic|ways|integers?|dollars?|cents?|mph|inch(?:es)?|hours?|hrs?|minutes?|mins?|" +
  "seconds?|secs?|days?|weeks?|months?|years?|km|cm|mm|meters?|metres?|kilomet(?:er|re)s?|" +
  "centimet(?:er|re)s?|millilit(?:er|re)s?|feet|foot|millimet(?:er|re)s?|kilograms?|milligrams?|" +
  "ounces?|oz|radians?|euros?|ft|yards?|miles?|points?|digits?|degrees?|pounds?|lbs?|grams?|gm|kg|" +
  "liters?|litres?|ml|people|students?|times|sides?|cups?|pieces?|books?|coins?|marbles?|apples?|" +
  "percentage points?";
const UNIT_TAIL = new RegExp(
  `^(.*?[0-9}a-zA-Z)])\\s*(?:(?:${UNIT_WORDS})\\b(?:\\^\\{?[23]\\}?|²|³)?\\s*)+$`,
);
// Cheap prechecks: a rule whose pattern cannot occur returns the answer without running its replaces.
const RELATION_SPELLING = /\\(?:ne|le|ge|lt|gt)|[<>!]=/;
const DEGREE_MARK = /circ|°|degree/;
const ENDS_IN_WORD = /[a-zA-Z]{2}\s*(?:\^\{?[23]\}?|²|³)?\s*$/;
const TEXT_WRAPPERS =
  /\\(?:text|textbf|textit|textnormal|mathrm|mathbf|mathit|mbox|operatorname|textsf|mathsf)\s*\{/g;

const QUANTIFIER_TAIL = /^([\s\S]*?)[\s,]*(?:\\forall|\bfor (?:all|every|each|any))\b[^=<>]*$/;

const TEXT_ANNOTATION =
  /^\s*(-?\d+(?:\.\d+)?)\s*\\(?:text|mbox|textrm|mathrm)\s*\{([a-zA-Z .,'-]*)\}\s*\.?\s*$/;
const VALUE_WORDS =
  /\b(?:pi|squared|cubed|factorial|hundreds?|thousands?|millions?|billions?|trillions?|dozens?|percent|half|halves|thirds?|quarters?|sqrt|roots?|inverse|not|no|or|and|less|more|than|least|most|over|under|plus|minus|times|divided|e|i)\b/i;

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

const DOT_REPEAT = new RegExp(
  String.raw`(\d*)\.(\d*)\\dot\s*\{?(\d)\}?(?:(\d*)\\dot\s*\{?(\d)\}?)?(?!\d)`,
  "g",
);

// An inequality anywhere in the answer: "and"/"or" then join relations, not list items.
const INEQUALITY = /[<>]|\\(?:le|ge|ne)(?![a-zA-Z])/;
const EMPTY_WORDS =
  /^\s*(?:there (?:is|are) )?(?:no (?:real |such |possible )?(?:solutions?|roots?|values?)|(?:the )?empty set)\s*\.?\s*$/i;

const ROW_BREAK = "\uE000"; // a private-use character no answer contains

/** Normalisation options: `decimalComma` reads "1,5" as 1.5 (never by default: "1,5" is usually a list). */
export interface NormalizeOptions {
  decimalComma?: boolean;
}

interface Ctx {
  percent: boolean;
  unit: Unit | null;
  options: NormalizeOptions;
}

/** One named rewrite of the answer string. */
export interface NormalizeRule {
  name: string;
  apply(s: string, ctx: Ctx): string;
}

// Every backslash run even and one before a letter: a string escaped twice (JSON in JSON, a Python repr).
function undouble(s: string): string {
  const runs = s.match(/\\+/g);
  if (!runs || !runs.every((r) => r.length % 2 === 0) || !/\\\\[a-zA-Z]/.test(s)) return s;
  return s.replace(/\\\\/g, "\\");
}

// Unit symbols after a plain number. Glued to the number only the seconds/hours of "12s", "3h" and symbols of
// two or more letters; "5m" stays 5·m (m is a common variable), "5 m" is five metres.
const UNIT_SYMBOLS = "km/h|m/s|mi/h|kph|kmh|mph|km|cm|mm|kg|mg|mL|ml|kW|kWh|Hz|hr|min|s|h";
const SPACED_UNIT_SYMBOLS = "m|g|L|l|W|V|A|N|J|in|ft|yd|mi|oz|lbs?";
const UNIT_SYMBOL_TAIL = new RegExp(
  `^(-?[\\d.]+)(?:\\s*(?:${UNIT_SYMBOLS})|\\s+(?:${SPACED_UNIT_SYMBOLS}))(?:\\^\\{?[23]\\}?|²|³)?$`,
);

// zero..twenty, then the tens: thirty (the 22nd word) is 30.
const NUMBER_WORDS = new Map<string, string>(
  ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " +
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety").split(" ")
    .map((w, i) => [w, String(i <= 20 ? i : 30 + 10 * (i - 21))]),
);

/** The rules in the order they run (the order matters: row breaks are masked before the spacing clean-up). */
export const NORMALIZE_RULES: readonly NormalizeRule[] = [
  { name: "doubled_backslashes", apply: undouble },
  // Matrix row breaks (\\) must survive the spacing clean-up below, which eats "\ " and "\,".
  { name: "mask_row_breaks", apply: (s) => s.replaceAll("\\\\", ROW_BREAK) },
  // "185\" (row breaks are masked by now)
  { name: "trailing_backslash", apply: (s) => s.trimEnd().endsWith("\\") ? s.trimEnd().slice(0, -1) : s },
  { name: "escaped_currency_digit", apply: (s) => s.replace(/\\(?=\d)/g, "") }, // \boxed{\15} for \$15
  { name: "newlines", apply: (s) => s.replace(/\r?\n/g, " ") },
  { name: "thin_space_separator", apply: (s) => s.replace(/,\\!/g, "") },
  {
    name: "spacing_macros",
    apply: (s) =>
      s.replace(/\\(?:displaystyle|textstyle|limits|!|,|;|:|quad|qquad)/g, " ").replace(/\\ /g, " ")
        .replace(/~/g, " "),
  },
  {
    name: "left_right",
    apply: (s) =>
      s.replace(
        /\\(?:left|right|bigl|bigr|Bigl|Bigr|big|Big)\s*(?=[()[\]|.]|\\[{}|]|\\[lr]?vert|\\[lr](?:floor|ceil))/g,
        "",
      )
        .replace(/\\(?:left|right)\s*\./g, ""),
  },
  { name: "frac_variants", apply: (s) => s.replace(/\\[dtc]frac/g, "\\frac") },
  // An inverse trigonometric function written as a power, \sin^{-1}(x): the arcsine, as \arcsin(x).
  {
    name: "inverse_trig_power",
    apply: (s) =>
      !s.includes("^") ? s : s.replace(
        /\\(sin|cos|tan|cot|sec|csc)\s*\^\s*\{\s*-1\s*\}|\\(sin|cos|tan|cot|sec|csc)\s*\^\s*-1(?!\d)/g,
        (_, a, b) => `\\arc${a ?? b}`,
      ),
  },
  {
    name: "relation_spellings",
    apply: (s) =>
      !RELATION_SPELLING.test(s)
        ? s
        : s.replace(/\\(?:neq|ne)\b/g, "\\ne").replace(/\\leq?(?:slant)?\b/g, "\\le")
          .replace(/\\geq?(?:slant)?\b/g, "\\ge").replace(/\\lt\b/g, "<").replace(/\\gt\b/g, ">")
          .replace(/>=/g, "\\ge ").replace(/<=/g, "\\le ").replace(/!=/g, "\\ne "),
  },
  {
    name: "unicode_symbols",
    apply: (s) =>
      !/[^ -~\s]/.test(s) // ASCII only: nothing to replace
        ? s
        : s.replace(/≤/g, "\\le").replace(/≥/g, "\\ge").replace(/≠/g, "\\ne").replace(/−/g, "-")
          .replace(/×/g, "\\times").replace(/π/g, "\\pi").replace(/∞/g, "\\infty").replace(/√/g, "\\sqrt")
          .replace(/·/g, "\\cdot").replace(/±/g, "\\pm ").replace(/∓/g, "\\mp "),
  },
  // A number annotated in words, "17\text{ apples}", "4\mbox{ cm}": the number. Not a word that changes the value
  // or hedges ("3\text{ million}", "5\text{ factorial}", "17\text{ or more}", "2\text{ not }…").
  {
    name: "text_annotation",
    apply: (s, ctx) => {
      const m = TEXT_ANNOTATION.exec(s);
      if (!m || !/[a-zA-Z]/.test(m[2]) || VALUE_WORDS.test(m[2])) return s;
      const unit = parseUnit(m[2]);
      if (unit === null && !/[a-zA-Z]{2}/.test(m[2])) return s;
      ctx.unit = unit;
      return m[1];
    },
  },
  // \text{ and } / \text{or} separate list items; other text wrappers just unwrap.
  {
    name: "text_wrappers",
    apply: (s) =>
      unwrap(s, TEXT_WRAPPERS, (inner) => /^\s*(and|or)\s*$/i.test(inner) ? ` ${inner.trim()} ` : inner),
  },
  // A definition's quantifier, "f(n) = n for all n" / "\forall x \in \mathbb{R}": the definition is the answer.
  {
    name: "quantifier_tail",
    apply: (s) =>
      /for|\\forall/.test(s) ? s.replace(QUANTIFIER_TAIL, (m, pre: string) => /=/.test(pre) ? pre : m) : s,
  },
  // Ordinals and quotes: 5^{\text{th}} → 5, “Navin” → Navin.
  {
    name: "ordinals",
    apply: (s) => s.replace(/(\d)\s*(?:\^\s*\{?\s*(?:st|nd|rd|th)\s*\}?|(?:st|nd|rd|th)\b)/g, "$1"),
  },
  { name: "quotes", apply: (s) => s.replace(/^\s*["“'‘]+(.*?)["”'’]+\s*$/, "$1") },
  {
    name: "repeating_decimal",
    apply: (s) =>
      !s.includes("\\overline")
        ? s
        : s.replace(/(\d*)\.(\d*)\\overline\s*\{(\d+)\}/g, (_, a, b, c) => repeatingDecimal(a, b, c)),
  },
  // The dot-accent spelling: a dot over the repetend's first and last digit (one dot for one digit),
  // 0.\dot{3} = 1/3, 0.1\dot{6} = 1/6, 0.\dot{1}\dot{2} = 0.1212… = 4/33, 0.\dot{1}4\dot{2} = 0.142142….
  {
    name: "repeating_decimal_dots",
    apply: (s) =>
      !s.includes("\\dot")
        ? s
        : s.replace(DOT_REPEAT, (_, a, b, c, mid, d) => repeatingDecimal(a, b, c + (d ? mid + d : ""))),
  },
  { name: "decorations", apply: (s) => s.replace(/\\(?:overline|underline|boxed|fbox|hat|vec)\s*\{/g, "{") },
  // "and"/"or" between inequalities say intersection/union (\land, \lor: the connective form); elsewhere they
  // join a list ("x = 5 and x = -2", "3 or 4").
  {
    name: "and_or_lists",
    apply: (s) =>
      !/(?:^|[^a-zA-Z])(?:and|or)(?:[^a-zA-Z]|$)/.test(s) ? s : s.replace(
        /(^|[^a-zA-Z])(and|or)(?=[^a-zA-Z]|$)/g,
        (_, pre: string, w: string) => (INEQUALITY.test(s) ? `${pre} \\l${w} ` : `${pre},`),
      ),
  },
  {
    name: "currency",
    apply: (s, ctx) =>
      s.replace(/\\\$|\$|€|£|\\euro\b/g, (sym) => {
        ctx.unit = currencyUnit(sym);
        return "";
      }),
  },
  // Degrees inside a trig function are converted (sin 60° = √3/2); elsewhere the degree sign is dropped, and
  // "45^\circ,135^\circ" stays a list (not the grouped number 45,135).
  {
    name: "degrees",
    apply: (s) =>
      !DEGREE_MARK.test(s) ? s : s.replace(
        /\\(sin|cos|tan|cot|sec|csc)\s*(\(?)\s*(-?[0-9.]+)\s*(?:\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|°)\s*(\)?)/g,
        (whole, fn, open, deg, close) => (open && !close ? whole : `\\${fn}(${deg}\\pi/180)`),
      ).replace(/(?:\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|°|\\circ|\\degree)\s*,/g, ", ")
        .replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|°|\\circ|\\degree/g, ""),
  },
  { name: "brace_comma", apply: (s) => s.replace(/\{\s*,\s*\}/g, "") }, // 14{,}916, also spaced 14 {, }916
  // An ellipsis stays a member ("1, 2, 3, \ldots" is not the finite list "1, 2, 3"), in one spelling.
  { name: "ellipsis", apply: (s) => s.replace(/\\(?:ldots|cdots|dots|dotsc|dotsb)\b|\.\.\.|…/g, "\\ldots") },
  { name: "empty_set", apply: (s) => s.replace(/\\(?:varnothing|emptyset)\b|\\\{\s*\\\}|∅/g, "\\emptyset") },
  // ∅ in words, as the whole answer: "no solution", "No real solutions.", "the empty set".
  { name: "empty_set_words", apply: (s) => (EMPTY_WORDS.test(s) ? "\\emptyset" : s) },
  { name: "infinity_words", apply: (s) => s.replace(/\b(?:infinity|inf)\b/gi, "\\infty") },
  { name: "reals", apply: (s) => s.replace(/\\mathbb\s*\{?\s*R\s*\}?/g, "(-\\infty,\\infty)") },
  {
    name: "percent",
    apply: (s, ctx) =>
      s.replace(/\\%|%|\b(?:percent(?:age)?|pct)\b/gi, () => {
        ctx.percent = true;
        return "";
      }),
  },
  // Malformed LaTeX as models and graders write it: \frac12, \frac1{72}, \sqrt3, sqrt(x).
  {
    name: "frac_shorthand",
    apply: (s) =>
      !s.includes("\\frac")
        ? s
        : s.replace(/\\frac\s*(\d)\s*(\d)/g, "\\frac{$1}{$2}").replace(/\\frac\s*(\d)\s*\{/g, "\\frac{$1}{"),
  },
  // A mixed number, 918\frac{1}{2} = 918 + 1/2 (a proper fraction after a whole number standing alone).
  {
    name: "mixed_number",
    apply: (s) =>
      s.replace(
        /(^|[\s=,(-])(\d+)\s*\\frac\{(\d+)\}\{(\d+)\}(?![\w\\{(^])/g,
        (m, pre, whole, num, den) =>
          Number(num) < Number(den) ? `${pre}(${whole}+\\frac{${num}}{${den}})` : m,
      ),
  },
  {
    name: "sqrt_shorthand",
    apply: (s) => !s.includes("sqrt") ? s : s.replace(/\\sqrt\s*(\d+|[a-zA-Z])/g, "\\sqrt{$1}"),
  },
  {
    name: "sqrt_call",
    apply: (s) => !s.includes("sqrt") ? s : s.replace(/(^|[^\\a-zA-Z])sqrt\s*\(/g, "$1\\sqrt("),
  },
  {
    name: "plain_pi",
    apply: (s) => !s.includes("pi") ? s : s.replace(/(^|[^\\a-zA-Z])pi(?![a-zA-Z])/g, "$1\\pi"),
  },
  { name: "whitespace", apply: (s) => s.replace(/\s+/g, " ").trim() },
  { name: "trailing_period", apply: (s) => s.replace(/[.。]+$/, "").trim() },
  {
    name: "unit_words",
    apply: (s, ctx) => {
      // Only an answer ending in a word (or its square or cube) can end in a unit word: most answers are
      // skipped before the slow alternation.
      if (!ENDS_IN_WORD.test(s)) return s;
      const unit = UNIT_TAIL.exec(s);
      if (!unit || !/[0-9]/.test(unit[1])) return s;
      ctx.unit = parseUnit(s.slice(unit[1].length));
      return unit[1].trim();
    },
  },
  // A unit symbol ("5 m", "12s", "40 km/h") only after a plain number; elsewhere m, s, h are variables.
  {
    name: "unit_symbols",
    apply: (s, ctx) =>
      s.replace(UNIT_SYMBOL_TAIL, (whole, num: string) => {
        ctx.unit = parseUnit(whole.slice(num.length));
        return num;
      }),
  },
  { name: "approx_prefix", apply: (s) => s.replace(/^[a-zA-Z]*\s*\\approx\s*/, "") },
  // Thousands separators when the whole answer is one grouped number (a list "1,000" is rare; "1, 2" is not),
  // or the number after "=" ("x = 15,600"). A leading group 0 ("0,111") is no grouping.
  {
    name: "thousands_separators",
    apply: (s) =>
      /^-?[1-9]\d{0,2}(?:(?:,|\s)\d{3})+(?:\.\d+)?$/.test(s)
        ? s.replace(/[,\s]/g, "")
        : s.replace(/(=\s*-?)(\d{1,3}(?:,\d{3})+)(?![\d,])/g, (_, eq, n) => eq + n.replace(/,/g, "")),
  },
  // A whole answer in scientific notation: 1.5e3, 2E-4 (elsewhere "e" is Euler's number).
  {
    name: "scientific_notation",
    apply: (s) => s.replace(/^(-?\d+(?:\.\d+)?)[eE]([+-]?\d+)$/, (_, m, e) => `${m}\\times10^{${e}}`),
  },
  // A whole answer that is one number word: "five" → 5, "twenty" → 20.
  { name: "number_words", apply: (s) => NUMBER_WORDS.get(s.toLowerCase()) ?? s },
  {
    name: "decimal_comma",
    apply: (s, ctx) => ctx.options.decimalComma ? s.replace(/^(-?\d+),(\d+)$/, "$1.$2") : s,
  },
  { name: "leading_dot", apply: (s) => !s.includes(".") ? s : s.replace(/(^|[^\d])\.(\d)/g, "$10.$2") },
  // Trailing zeros of a decimal carry no value: 12.000 → 12, 2.50 → 2.5.
  {
    name: "trailing_zeros",
    apply: (s) =>
      !s.includes(".") ? s : s.replace(/(\d+)\.(\d*?)0+(?!\d)/g, (_, a, b) => b === "" ? a : `${a}.${b}`),
  },
  { name: "unmask_row_breaks", apply: (s) => s.replaceAll(ROW_BREAK, "\\\\") },
];

/**
 * Normalise an extracted LaTeX answer string with NORMALIZE_RULES in order; never throws. Returns the text, a
 * percent marker (the value is v/100, see grade.ts), the unit stripped from a single quantity ("5 cm", "\$5";
 * null when none or not one of units.ts) and the rules that fired.
 */
export function normalizeAnswer(raw: string, options: NormalizeOptions = {}) {
  const ctx: Ctx = { percent: false, unit: null, options };
  const fired: string[] = [];
  let s = raw;
  for (const rule of NORMALIZE_RULES) {
    const next = rule.apply(s, ctx);
    if (next !== s && rule.name !== "mask_row_breaks" && rule.name !== "unmask_row_breaks") {
      fired.push(rule.name);
    }
    s = next;
  }
  // A unit belongs to a single quantity: a list of amounts ("\$5, \$10") carries none.
  const unit = ctx.unit !== null && !s.includes(",") ? ctx.unit : null;
  return { text: s, percent: ctx.percent, unit, fired };
}
