// What a problem's text says about the order of a list answer (evaluators/compare.ts asksForOrder).
import { assertEquals } from "../assert.ts";
import { asksForOrder } from "../../evaluators/compare.ts";

Deno.test("asksForOrder: terms, sequences, orders and named unknowns ask for an order; sets do not", () => {
  const cases: [string, boolean][] = [
    ["Enter all possible values, separated by commas.", false],
    ["Determine all real values of $x$ for which $(x+8)^{4}=(2 x+16)^{2}$.", false],
    ["Determine their ages.", false],
    ["Find the first three terms of the sequence.", true],
    ["List the roots in increasing order.", true],
    ["Find the ordered triple.", true],
    ["Their ages are $p$, $q$ and $r$ respectively.", true],
    ["Find $a$, $b$, and $c$.", true],
    ["Find $a+b+c$.", false],
  ];
  assertEquals(cases.map(([p]) => asksForOrder(p)), cases.map(([, want]) => want));
});
