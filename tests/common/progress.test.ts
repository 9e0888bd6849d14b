import { assertEquals } from "../assert.ts";
import { formatEta } from "../../common/progress.ts";

Deno.test("formatEta: '--' until cli-progress has a rate (it passes 'INF'/'NULL', once shown as 'NFs')", () => {
  const options = { autopaddingChar: "0" };
  assertEquals(formatEta("INF", options, 5), "--");
  assertEquals(formatEta("NULL", options, 5), "--");
  assertEquals(formatEta(Infinity, options, 5), "--");
  assertEquals(formatEta(75, options, 5), "01m15s");
  assertEquals(formatEta(7, options, 5), "07s");
});
