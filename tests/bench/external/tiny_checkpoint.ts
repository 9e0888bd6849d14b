// A tiny untrained tfjs checkpoint for the serve tests: it answers gibberish, which is all the API path needs.
import { Rng } from "../../../common/prng.ts";
import { saveBundle } from "../../../bench/engines/tfjs/checkpoint.ts";
import {
  createModel,
  disposeModel,
  getWeightsAsync,
  initBackend,
} from "../../../bench/engines/tfjs/model.ts";
import { modelConfig, resolveSettings, settingsTokenizer } from "../../../bench/engines/tfjs/settings.ts";

/** Write a 1-layer, 16-wide model (12 new tokens after a `promptLength`-token prompt) to `dir` as a checkpoint. */
export async function writeTinyCheckpoint(dir: string, promptLength = 16): Promise<void> {
  await initBackend("cpu");
  const settings = resolveSettings({
    backend: "cpu",
    model: { dModel: 16, heads: 2, layers: 1, promptLength },
    rl: { maxNewTokens: 12 },
  });
  const model = createModel(modelConfig(settings, settingsTokenizer(settings)), Rng.seeded(7));
  saveBundle(dir, { settings, weights: await getWeightsAsync(model) });
  disposeModel(model);
}
