// Units as part of an answer's value: a small table (length, area, volume, mass, time, calendar time, angle,
// speed, currency) mapping a written unit to its dimension and its size in the dimension's base unit, as an
// exact mathjs factor. normalize.ts records the unit it strips from "5 cm", "12 \text{ inches}", "\$5"; the
// grader converts a prediction's unit into the gold's (50 mm ≡ 5 cm) and rejects a different dimension
// (cm³ for cm²) or a different size (5 m for 5 cm). Counting nouns ("5 apples", "3 ways") are no units.

/** A unit: its canonical name, its dimension, and its size in the dimension's base unit (mathjs syntax). */
export interface Unit {
  name: string;
  dim: string;
  factor: string;
}

// Base units: metre, kilogram... in exact fractions (1 in = 0.0254 m = 127/5000 m exactly).
const LINEAR: Record<string, [string, string]> = {
  mm: ["length", "1/1000"],
  cm: ["length", "1/100"],
  m: ["length", "1"],
  km: ["length", "1000"],
  in: ["length", "127/5000"],
  ft: ["length", "381/1250"],
  yd: ["length", "1143/1250"],
  mi: ["length", "201168/125"],
  mg: ["mass", "1/1000000"],
  g: ["mass", "1/1000"],
  kg: ["mass", "1"],
  lb: ["mass", "45359237/100000000"],
  oz: ["mass", "45359237/1600000000"],
  s: ["time", "1"],
  min: ["time", "60"],
  h: ["time", "3600"],
  day: ["time", "86400"],
  week: ["time", "604800"],
  // Months and years have no fixed number of days: they convert only into each other.
  month: ["calendar", "1"],
  year: ["calendar", "12"],
  L: ["volume", "1/1000"],
  mL: ["volume", "1/1000000"],
  deg: ["angle", "pi/180"],
  rad: ["angle", "1"],
  "km/h": ["speed", "5/18"],
  "m/s": ["speed", "1"],
  mph: ["speed", "1397/3125"],
  USD: ["currency:USD", "1"],
  cent: ["currency:USD", "1/100"],
  EUR: ["currency:EUR", "1"],
  GBP: ["currency:GBP", "1"],
};

// Spellings of each canonical name, space-separated (lower case; plural "s" is removed before the look-up).
const SPELLINGS: Record<string, string> = Object.fromEntries(
  Object.entries({
    mm: "millimeter millimetre",
    cm: "centimeter centimetre",
    m: "meter metre",
    km: "kilometer kilometre",
    in: "inch inche",
    ft: "foot feet",
    yd: "yard",
    mi: "mile",
    mg: "milligram",
    g: "gram gm",
    kg: "kilogram",
    lb: "lb",
    oz: "ounce",
    s: "sec second",
    min: "minute",
    h: "hr hour",
    year: "yr",
    L: "liter litre l",
    mL: "ml milliliter millilitre",
    deg: "degree",
    rad: "radian",
    USD: "dollar usd",
    EUR: "euro",
    "km/h": "kmh kph",
    mph: "mi/h",
  }).flatMap(([name, words]) => words.split(" ").map((w) => [w, name])),
);

function linearUnit(word: string): string | null {
  if (word in LINEAR) return word; // case matters for symbols: "m" metre, "L" litre
  const lower = word.toLowerCase();
  if (lower in LINEAR && lower.length > 1) return lower;
  const singular = lower.length > 2 && lower.endsWith("s") ? lower.slice(0, -1) : lower;
  return SPELLINGS[lower] ?? SPELLINGS[singular] ?? (singular in LINEAR ? singular : null);
}

/**
 * The unit written in a tail such as "cm", "square feet", "cm^2", "cubic inches", "\text{ km}/h", or null when
 * the tail is no unit of the table (counting nouns, "ways", "points", an unknown symbol).
 */
export function parseUnit(tail: string): Unit | null {
  let t = tail.replace(/\\(?:text|mathrm|mbox|textrm)\s*/g, "").replace(/[{}]/g, "").replace(/²/g, "^2")
    .replace(/³/g, "^3").trim().replace(/\s*\/\s*/g, "/").replace(/\s+per\s+/g, "/").replace(/\.$/, "");
  let power = 1;
  const lead = /^(square|sq\.?|cubic)\s+/i.exec(t);
  if (lead) {
    power = /^cubic/i.test(lead[1]) ? 3 : 2;
    t = t.slice(lead[0].length);
  }
  const exp = /\^\s*([23])$/.exec(t);
  if (exp) {
    if (lead) return null;
    power = Number(exp[1]);
    t = t.slice(0, exp.index).trim();
  }
  if (/^miles\/hour$|^miles\/h$/i.test(t)) t = "mph";
  if (/^(?:kilometers|km)\/hour$/i.test(t)) t = "km/h";
  const name = linearUnit(t);
  if (name === null) return null;
  const [dim, factor] = LINEAR[name];
  if (power === 1) return { name, dim, factor };
  if (dim !== "length") return null;
  return {
    name: `${name}^${power}`,
    dim: power === 2 ? "area" : "volume",
    factor: `(${factor})^${power}`,
  };
}

/** The currency a symbol stands for ($, \$ → USD, € → EUR, £ → GBP). */
export function currencyUnit(symbol: string): Unit {
  const name = symbol.includes("€") || symbol.includes("euro") ? "EUR" : symbol.includes("£") ? "GBP" : "USD";
  const [dim, factor] = LINEAR[name];
  return { name, dim, factor };
}
