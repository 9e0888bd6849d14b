// What eval asks the server to sample with: the parameters it always sends, the server-specific ones the user
// sets with `--sampling`, and the ones left to the server's own default, recorded so a report says which.

/** A server-specific sampling value as sent on the wire (JSON). */
export type ServerValue = number | string | boolean | null | ServerValue[] | { [k: string]: ServerValue };

/** Parameters eval always sends from its own flags; `--sampling` may not set them (one place per setting). */
const OWN_PARAMS: Record<string, string> = {
  model: "--model",
  prompt: "--prompt-template",
  messages: "--prompt-template",
  n: "--n",
  temperature: "--temperature",
  top_p: "--top-p",
  max_tokens: "--max-tokens",
  max_completion_tokens: "--max-tokens",
  seed: "--seed",
  stop: "eval (it sends stop [], no stop strings: the end of sequence ends a reply)",
  stream: "(eval reads whole replies)",
};

/**
 * Sampling parameters that vLLM, SGLang or llama.cpp apply with a server-side default when a request leaves
 * them out, with the servers' names and defaults. A parameter of this table that `--sampling` does not set is
 * recorded as "server default (not sent)". llama.cpp's defaults (top_k 40, min_p 0.05) truncate the
 * distribution; vLLM also applies the model's generation_config.json unless started with
 * `--generation-config vllm`.
 */
const SERVER_DEFAULTED: { name: string; servers: string }[] = [
  { name: "top_k", servers: "vLLM, SGLang: off; llama.cpp: 40" },
  { name: "min_p", servers: "vLLM, SGLang: 0; llama.cpp: 0.05" },
  { name: "repetition_penalty", servers: "vLLM, SGLang: 1 (llama.cpp: repeat_penalty)" },
  { name: "repeat_penalty", servers: "llama.cpp: 1" },
  { name: "presence_penalty", servers: "all: 0" },
  { name: "frequency_penalty", servers: "all: 0" },
];

const NAME = /^[a-z][a-z0-9_]*$/;

/** A value of `--sampling key=value`: a number, true/false/null, or else the text as a string. */
function parseValue(text: string): ServerValue {
  if (["true", "false", "null"].includes(text)) return JSON.parse(text);
  if (text !== "" && Number.isFinite(Number(text))) return Number(text);
  return text;
}

/**
 * Parse `--sampling`: `top_k=40,min_p=0` or a JSON object (`{"top_k": 40, "dry_sequence_breakers": ["\n"]}`).
 * Throws an Error naming the bad entry for a malformed pair, a name that is not snake_case, a repeated name,
 * or a parameter eval sends from its own flag (temperature, top_p, max_tokens, n, seed, …).
 */
export function parseServerSampling(text: string): Record<string, ServerValue> {
  let entries: [string, ServerValue][];
  if (text.trim().startsWith("{")) {
    // Text starting with "{" parses to an object or not at all.
    try {
      entries = Object.entries(JSON.parse(text));
    } catch (e) {
      throw new Error(`--sampling: not a JSON object (${(e as Error).message})`);
    }
  } else {
    entries = text.split(",").map((pair) => {
      const eq = pair.indexOf("=");
      if (eq < 1) throw new Error(`--sampling: '${pair}' is not NAME=VALUE (e.g. top_k=40,min_p=0)`);
      return [pair.slice(0, eq).trim(), parseValue(pair.slice(eq + 1).trim())];
    });
  }
  const out: Record<string, ServerValue> = {};
  for (const [name, value] of entries) {
    if (!NAME.test(name)) throw new Error(`--sampling: '${name}' is not a parameter name (snake_case)`);
    if (name in OWN_PARAMS) {
      throw new Error(`--sampling: '${name}' is set by ${OWN_PARAMS[name]}, not by --sampling`);
    }
    if (name in out) throw new Error(`--sampling: '${name}' is given twice`);
    out[name] = value;
  }
  return out;
}

/** The defaulted parameters of SERVER_DEFAULTED that `server` leaves to the server, in table order. */
export function serverDefaults(server: Readonly<Record<string, ServerValue>>): string[] {
  return SERVER_DEFAULTED.map((p) => p.name).filter((name) => !(name in server));
}

/**
 * One line per kind of parameter of an evaluation's recorded protocol (`sent`: every parameter sent; n samples
 * per problem), for the report header: what eval sent from its own flags, what `--sampling` sent, and what was
 * left to the server, e.g. "top_k, min_p, …: server default (not sent)".
 */
export function describeSampling(s: Readonly<Record<string, unknown>>, n: number): string[] {
  const server = Object.fromEntries(Object.entries(s).filter(([k]) => !(k in OWN_PARAMS)));
  const sent = Object.entries(server).map(([k, v]) => `${k} ${JSON.stringify(v)}`);
  const left = serverDefaults(server as Record<string, ServerValue>);
  return [
    `sent by eval: temperature ${s.temperature}, top_p ${s.top_p}, max_tokens ${s.max_tokens}, n ${n}, ` +
    `seed ${s.seed} (each request: a seed derived from it), stop []`,
    sent.length ? `sent with --sampling: ${sent.join(", ")}` : "sent with --sampling: nothing",
    left.length ? `${left.join(", ")}: server default (not sent)` : "every defaulted parameter was sent",
  ];
}
