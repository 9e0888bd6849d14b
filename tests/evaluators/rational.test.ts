import { assertEquals, ok } from "../assert.ts";
import { decimalPlaces, exactValue, rat, ratEqual, ratWithin } from "../../evaluators/rational.ts";

const show = (src: string, scope = {}) => {
  const v = exactValue(src, scope);
  return v === null ? null : v.d === 1n ? `${v.n}` : `${v.n}/${v.d}`;
};

Deno.test("rational: exact values of the translator's integer, decimal, power, factorial and binomial forms", () => {
  assertEquals(show("(2)^(53) + 1"), "9007199254740993");
  assertEquals(show("(3)^(40)"), "12157665459056928801");
  assertEquals(show("combinations(60, 30)"), "118264581564861424");
  assertEquals(show("fact(25) + 1"), "15511210043330985984000001");
  assertEquals(show("(1) / (3) - 0.25"), "1/12");
  assertEquals(show("-(2)^(-(2))"), "-1/4");
  assertEquals(show("(2)^(3)^(2)"), "512"); // ^ is right-associative, as in mathjs
  assertEquals(show("0.000001 + 1"), "1000001/1000000");
  assertEquals(show("x * x - 1", { x: rat(3n, 2n)! }), "5/4");
});

Deno.test("rational: no exact value for irrational forms, division by zero, caps and malformed input", () => {
  for (const src of ["sqrt(2)", "pi", "sin(1)", "x + 1", "(1) / (0)", "(10)^((10)^(10))", "fact(1000000)"]) {
    assertEquals(show(src), null, src);
  }
  for (const src of ["(2)^(1/2)", "fact(-1)", "fact(1/2)", "combinations(3, 5)", "1 +", "(1", "1 2", ""]) {
    assertEquals(show(src), null, src);
  }
});

Deno.test("rational: comparisons and decimal places", () => {
  ok(ratEqual(exactValue("0.5")!, exactValue("(1) / (2)")!));
  ok(ratWithin(exactValue("0.3333333")!, exactValue("(1) / (3)")!, rat(1n, 20_000_000n)!));
  ok(!ratWithin(exactValue("1.000001")!, exactValue("1")!, rat(1n, 2_000_000n)!));
  assertEquals(decimalPlaces("3.14 * x + 0.5"), 2);
  assertEquals(decimalPlaces("12"), 0);
});
