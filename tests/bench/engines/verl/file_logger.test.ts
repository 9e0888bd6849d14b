// ace_verl's patches are release-aware: each declares the VERL releases it applies to. The file logger patch
// (numpy scalars as JSON numbers) is 0.7.0's only; on 0.9.0, whose FileLogger writes orjson bytes to a file
// opened "wb", the old patch crashed every plan at its first step. Run against each release's real tracking.py.
import { join } from "node:path";
import { assertEquals } from "../../../assert.ts";
import { tempDir } from "../../../temp.ts";
import { VENV_PYTHON, VERL_SHARED } from "./verl_venv.ts";
import { exists } from "../../../../common/fs.ts";

const aceVerlDir = new URL("../../../../bench/engines/verl/", import.meta.url).pathname;

const script = `
import numpy as np, ace_verl
ace_verl.install()
import verl.utils.tracking as t
logger = t.FileLogger("p", "e")
logger.log({"count": np.int32(3), "score": 1.5}, 1)
logger.log({"count": np.int64(4)}, 2)
logger.finish()
`;

for (const release of ["0.7.0", "0.9.0"]) {
  Deno.test(`ace_verl on VERL ${release}: the file logger writes numpy metrics as JSON lines`, async () => {
    const src = join(VERL_SHARED, `verl-${release}`);
    if (!exists(join(src, "verl", "utils", "tracking.py")) || !exists(VENV_PYTHON)) {
      return console.log(
        `skipped: VERL ${release} sources (${src}) or the VERL venv (bash .ci/setup_verl_venv.sh) not found`,
      );
    }
    const log = join(tempDir(), "steps.jsonl");
    const out = await new Deno.Command(VENV_PYTHON, {
      args: ["-c", script],
      env: { PYTHONPATH: `${src}:${aceVerlDir}`, VERL_FILE_LOGGER_PATH: log },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 0, stderr.slice(-2000));
    const lines = Deno.readTextFileSync(log).trim().split("\n").map((l) => JSON.parse(l));
    assertEquals(lines, [
      { step: 1, data: { count: 3, score: 1.5 } },
      { step: 2, data: { count: 4 } },
    ]);
  });
}
