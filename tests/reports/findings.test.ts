// The findings page's tables come from kept results: render fills marked blocks from docs/results/, drift names a
// block whose numbers no longer match its files, and docs/findings.md as committed matches docs/results/.
import { join } from "node:path";
import { assertEquals, ok, throws } from "../assert.ts";
import { writeJson } from "../../common/fs.ts";
import { drift, render } from "../../reports/findings.ts";
import { tempDir } from "../temp.ts";

/** A kept folder with one calibration row, one control, two cells, one difference and training curves. */
function keptFixture(): string {
  const root = tempDir(), dir = join(root, "cal");
  Deno.mkdirSync(dir, { recursive: true });
  const write = (name: string, text: string) => Deno.writeTextFileSync(join(dir, name), text);
  write(
    "calibration.csv",
    "dataset,preset,lr,method,runs,k_max,d_pass1,d_pass1_lo,d_pass1_hi,d_passmax,d_passmax_lo,d_passmax_hi,kl,entropy,overconf_frac,overconf_mean_c,chosen\n" +
      "synthetic,grpo,0.0001,grpo-lr1e-4,4,32,0.1234,0.1,0.15,-0.02,-0.04,0,0.01234,0.5,0.4,0.6,true\n",
  );
  write(
    "controls.csv",
    "dataset,id,claim,source,published,published_where,k,a,b,diff,lo,hi,mdd,p_zero,p_published,outcome\n" +
      'synthetic,x,NSR above PSR,"Zhu et al. 2025, arXiv 2506.01347",0.057,"Table 1, MATH",32,psr,nsr,0.03,0.01,0.05,0.02,0.004,0.02,reproduced\n',
  );
  write(
    "cells.csv",
    "method,dataset,slice,step,k,pass_at_k,ci_lo,ci_hi\n" +
      "grpo,synthetic,all,80,1,0.5,0.45,0.55\ngrpo,synthetic,all,80,32,0.9,0.88,0.92\n",
  );
  write(
    "differences.csv",
    "dataset,a,b,k,diff,ci_lo,ci_hi,mdd\nsynthetic,grpo,ace-grpo,1,-0.01,-0.02,0.0,0.015\n",
  );
  write(
    "training.csv",
    "method,metric,step,median,q25,q75\ngrpo,err_shortcut_c,79,1,0,2\ngrpo,err_shortcut_c,80,2,1,3\ngrpo,err_other_c,80,-1,-2,0\n",
  );
  write(
    "dose.csv",
    "variant,baseline,dataset,k,alpha,kind,value,lo,hi,mdd\n" +
      "ace-grpo (softplus; sum),grpo,synthetic,1,1,delta,-0.01,-0.02,0,0.01\n" +
      "ace-grpo (softplus; sum),grpo,synthetic,1,,slope,-0.002,-0.004,0,0.001\n",
  );
  writeJson(join(dir, "provenance.json"), {
    sweep: "cal",
    configHash: null,
    command: "deno task sweep --preset cal",
    commit: "0123456789abcdef",
    backend: "blas",
    machine: null,
    versions: null,
    startedAt: "2026-12-04T20:00:00Z",
    finishedAt: "2026-12-04T20:30:00Z",
    wallSeconds: 1800,
    note: "load 2.0",
    keptAt: "2026-12-04T21:00:00Z",
  });
  return root;
}

const DOC = [
  "text before",
  "<!-- results:cal:calibration -->",
  "stale",
  "<!-- /results -->",
  "<!-- results:cal:controls:synthetic -->",
  "<!-- /results -->",
  "<!-- results:cal:cells:synthetic:1,32 -->",
  "<!-- /results -->",
  "<!-- results:cal:differences:synthetic:ace-grpo:1 -->",
  "<!-- /results -->",
  "<!-- results:cal:errors -->",
  "<!-- /results -->",
  "<!-- results:cal:dose:synthetic -->",
  "<!-- /results -->",
  "<!-- results:cal:provenance -->",
  "<!-- /results -->",
  "text after",
].join("\n");

Deno.test("findings: render fills every marked table from the kept files, in points, and leaves other text", () => {
  const root = keptFixture();
  const out = render(DOC, root);
  ok(out.startsWith("text before\n") && out.endsWith("\ntext after"));
  ok(!out.includes("stale"));
  ok(
    out.includes(
      "| grpo | 0.0001 | +12.3 [+10.0, +15.0] | −2.0 [−4.0, +0.0] | 0.0123 | 0.500 | 0.40 | 0.60 | **chosen** |",
    ),
    out,
  );
  ok(
    out.includes(
      "| NSR above PSR (Zhu et al. 2025, arXiv 2506.01347) | +5.7 (Table 1, MATH) | 32 | +3.0 | [+1.0, +5.0] | 2.0 | reproduced |",
    ),
    out,
  );
  ok(out.includes("| grpo | 50.0 [45.0, 55.0] | 90.0 [88.0, 92.0] |"), out);
  ok(out.includes("| ace-grpo − grpo | −1.0 [−2.0, +0.0] (MDD 1.5) |"), out);
  ok(out.includes("| grpo | −1.00 | 1.50 |"), out); // other, shortcut (mean of the last steps' medians)
  ok(out.includes("`deno task sweep --preset cal` at commit 0123456 ("), out);
  ok(out.includes("| ace-grpo (softplus; sum) | 1 | −1.0 [−2.0, +0.0] | −0.2 [−0.4, +0.0] |"), out);
  assertEquals(drift(out, root), []);
});

Deno.test("findings: drift names the table whose number was edited by hand; an unknown table is an error", () => {
  const root = keptFixture();
  const good = render(DOC, root);
  const edited = good.replace("+12.3 [+10.0, +15.0]", "+12.4 [+10.0, +15.0]");
  assertEquals(drift(edited, root), ["cal:calibration"]);
  throws(() => render("<!-- results:cal:nope -->\n<!-- /results -->", root), /unknown table 'nope'/);
  throws(() => render("<!-- results:missing:calibration -->\n<!-- /results -->", root), /no such kept file/);
});

Deno.test("findings: docs/findings.md matches the results kept in docs/results/", () => {
  const doc = Deno.readTextFileSync(new URL("../../docs/findings.md", import.meta.url));
  const results = new URL("../../docs/results", import.meta.url).pathname;
  ok(doc.includes("<!-- results:"), "the findings page renders its tables from kept results");
  assertEquals(drift(doc, results), [], "re-render with: deno task findings");
});
