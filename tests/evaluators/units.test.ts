// The unit table (evaluators/units.ts) and the unit a normalised answer carries (normalize.ts).
import { assertEquals } from "../assert.ts";
import { currencyUnit, parseUnit } from "../../evaluators/units.ts";
import { normalizeAnswer } from "../../evaluators/normalize.ts";
import { exactValue } from "../../evaluators/rational.ts";

const unit = (tail: string) => {
  const u = parseUnit(tail);
  return u === null ? null : `${u.name} ${u.dim}`;
};

Deno.test("units: spellings, plurals, squares and cubes map to one unit and dimension", () => {
  assertEquals(unit("cm"), "cm length");
  assertEquals(unit("centimetres"), "cm length");
  assertEquals(unit("\\text{ inches}"), "in length");
  assertEquals(unit("feet"), "ft length");
  assertEquals(unit("square feet"), "ft^2 area");
  assertEquals(unit("cm^2"), "cm^2 area");
  assertEquals(unit("cm³"), "cm^3 volume");
  assertEquals(unit("cubic inches"), "in^3 volume");
  assertEquals(unit("mL"), "mL volume");
  assertEquals(unit("lbs"), "lb mass");
  assertEquals(unit("hrs"), "h time");
  assertEquals(unit("years"), "year calendar");
  assertEquals(unit("km/h"), "km/h speed");
  assertEquals(unit("miles per hour"), "mph speed");
  assertEquals(unit("cents"), "cent currency:USD");
  // Counting nouns and unknown words are no units; a square of a mass is none either.
  assertEquals(unit("apples"), null);
  assertEquals(unit("ways"), null);
  assertEquals(unit("kg^2"), null);
  assertEquals(currencyUnit("€").dim, "currency:EUR");
});

Deno.test("units: factors are exact (1 inch = 2.54 cm, 1 mL = 1 cm³)", () => {
  const ratio = (a: string, b: string) => {
    const v = exactValue(`(${parseUnit(a)!.factor}) / (${parseUnit(b)!.factor})`)!;
    return `${v.n}/${v.d}`;
  };
  assertEquals(ratio("inch", "cm"), "127/50");
  assertEquals(ratio("mL", "cm^3"), "1/1");
  assertEquals(ratio("foot", "inches"), "12/1");
  assertEquals(ratio("km/h", "m/s"), "5/18");
  assertEquals(ratio("year", "month"), "12/1");
});

Deno.test("units: normalisation records the unit of a single quantity, never of a list", () => {
  const of = (s: string) => normalizeAnswer(s).unit?.name ?? null;
  assertEquals(of("5 cm"), "cm");
  assertEquals(of("12 \\text{ inches}"), "in");
  assertEquals(of("4\\mbox{ cm}"), "cm");
  assertEquals(of("864 \\mbox{ inches}^2"), "in^2");
  assertEquals(of("\\$18.90"), "USD");
  assertEquals(of("40 km/h"), "km/h");
  assertEquals(of("65 \\text{ children tickets}"), null);
  assertEquals(of("\\$5, \\$10"), null);
  assertEquals(of("5m"), null); // glued: 5·m
});
