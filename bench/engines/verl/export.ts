// Datasets → parquet in VERL's RL dataset schema (data_source, prompt as a chat list, ability, reward_model,
// extra_info), written with hyparquet-writer in the layout pyarrow gives the same columns, read back with hyparquet.
import { parquetReadObjects } from "hyparquet";
import { parquetWriteBuffer } from "hyparquet-writer";
import { atomicWrite } from "../../../common/fs.ts";
import { type MathRecord, renderPrompt } from "../../../datasets/mod.ts";

/** One row of a VERL RL dataset. */
export interface VerlRow {
  data_source: string;
  prompt: { role: string; content: string }[];
  ability: string;
  reward_model: { style: string; ground_truth: string };
  /** acebench's identity of the problem, so dumps can be mapped back to it. */
  extra_info: { index: bigint; split: string; id: string; dataset: string; template: string };
}

/** Rows for records: the prompt rendered with `template` as one user message, the published answer as ground truth. */
export function toVerlRows(
  records: readonly MathRecord[],
  options: { template: string; dataSource: string; split: "train" | "test" },
): VerlRow[] {
  return records.map((record, i) => ({
    data_source: options.dataSource,
    prompt: [{ role: "user", content: renderPrompt(record, options.template) }],
    ability: "math",
    reward_model: { style: "rule", ground_truth: record.answer },
    extra_info: {
      index: BigInt(i),
      split: options.split,
      id: record.id,
      dataset: record.dataset,
      template: options.template,
    },
  }));
}

const text = (name: string) => ({
  name,
  type: "BYTE_ARRAY",
  converted_type: "UTF8",
  logical_type: { type: "STRING" },
  repetition_type: "OPTIONAL",
});
const group = (name: string, children: number, list = false) => ({
  name,
  repetition_type: "OPTIONAL",
  num_children: children,
  ...(list ? { converted_type: "LIST", logical_type: { type: "LIST" } } : {}),
});

// Field order and nullability as pyarrow writes a `datasets` table with these columns (cf. the DAPO file).
const VERL_SCHEMA = [
  { name: "schema", repetition_type: "REQUIRED", num_children: 5 },
  text("data_source"),
  group("prompt", 1, true),
  { name: "list", repetition_type: "REPEATED", num_children: 1 },
  group("element", 2),
  text("content"),
  text("role"),
  text("ability"),
  group("reward_model", 2),
  text("ground_truth"),
  text("style"),
  group("extra_info", 5),
  text("dataset"),
  text("id"),
  { name: "index", type: "INT64", repetition_type: "OPTIONAL" },
  text("split"),
  text("template"),
];

/** Write rows atomically to `path` as snappy-compressed parquet; no rows is an error (VERL cannot train on it). */
export function writeVerlParquet(path: string, rows: readonly VerlRow[]): void {
  if (rows.length === 0) throw new Error("VERL export: no rows to write");
  const columns = ["data_source", "prompt", "ability", "reward_model", "extra_info"] as const;
  const buffer = parquetWriteBuffer({
    columnData: columns.map((name) => ({ name, data: rows.map((r) => r[name]) })),
    // deno-lint-ignore no-explicit-any
    schema: VERL_SCHEMA as any,
    kvMetadata: [{ key: "acebench.schema", value: "verl-rl-v1" }],
  });
  atomicWrite(path, new Uint8Array(buffer));
}

/** Read a VERL RL parquet file back; every row is checked for the schema's fields (the error names file and row). */
export async function readVerlParquet(path: string): Promise<VerlRow[]> {
  const bytes = await Deno.readFile(path);
  const rows = await parquetReadObjects({ file: bytes.buffer as ArrayBuffer }) as VerlRow[];
  rows.forEach((row, i) => checkRow(row, `${path}: row ${i}`));
  return rows;
}

function checkRow(row: VerlRow, where: string): void {
  if (typeof row.data_source !== "string") throw new Error(`${where}: data_source is not a string`);
  if (!Array.isArray(row.prompt) || row.prompt.length === 0 || typeof row.prompt[0]?.content !== "string") {
    throw new Error(`${where}: prompt is not a non-empty chat list`);
  }
  if (typeof row.reward_model?.ground_truth !== "string") {
    throw new Error(`${where}: reward_model.ground_truth is not a string`);
  }
  if (typeof row.extra_info?.id !== "string") throw new Error(`${where}: extra_info.id is not a string`);
}
