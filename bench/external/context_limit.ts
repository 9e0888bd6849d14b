// Reading a server's "prompt + max_tokens exceeds the context" rejection, to say which --max-tokens would fit.
// The wordings are those of the servers' sources: vLLM (renderer and engine checks), SGLang (tokenizer
// manager), llama.cpp (tools/server/server-context.cpp) and the OpenAI API.

/** The context length and prompt tokens stated in a server's error message, when it states them. */
export interface ContextLimit {
  /** The context length in tokens (for llama.cpp: one slot's share of `-c`). */
  context: number;
  /** Tokens of the prompt (a lower bound where the server says "at least"), or null when not stated. */
  prompt: number | null;
  /** True for llama.cpp, whose context is per slot: `-c` divided among `--parallel` slots. */
  perSlot: boolean;
}

/**
 * The wordings that state the prompt's tokens (group 1) then the context (group 2), first match wins:
 * - vLLM / OpenAI: "This model's maximum context length is 4096 tokens. However, you requested 4596 tokens (500
 *   in the messages, 4096 in the completion)", "... and your request has 69 input tokens", "... you requested
 *   100 output tokens and your prompt contains at least 4001 input tokens, ...";
 * - vLLM engine: "The decoder prompt (length 5000) is longer than the maximum model length of 4096";
 * - SGLang: "... maximum context length of 2048 tokens. You requested a total of 2148 tokens: 100 tokens from
 *   the input messages and 2048 tokens for the completion", "The input (3000 tokens) is longer than the
 *   model's context length (2048 tokens)";
 * - llama.cpp: "request (300 tokens) exceeds the available context size (256 tokens), try increasing it",
 *   "input (300 tokens) is larger than the max context size (256 tokens). skipping".
 */
const WORDINGS: { re: RegExp; perSlot: boolean }[] = [
  { re: /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/i, perSlot: true },
  { re: /input \((\d+) tokens\) is larger than the max context size \((\d+) tokens\)/i, perSlot: true },
  { re: /decoder prompt \(length (\d+)\) is longer than the maximum model length of (\d+)/i, perSlot: false },
  {
    re: /input \((\d+) tokens\) is longer than the model's context length \((\d+) tokens\)/i,
    perSlot: false,
  },
];

/** A context rejection without numbers (older llama.cpp: "the request exceeds the available context size"). */
const BARE = /exceeds the available context size|exceed_context_size_error|context_length_exceeded/i;

/**
 * Parse the context-limit messages of vLLM, SGLang, llama.cpp and the OpenAI API (see WORDINGS). Returns null
 * for any other message, including a context rejection that states no numbers (see `isContextError`).
 */
export function parseContextLimit(message: string): ContextLimit | null {
  for (const w of WORDINGS) {
    const m = message.match(w.re);
    if (m) return { context: Number(m[2]), prompt: Number(m[1]), perSlot: w.perSlot };
  }
  const context = message.match(/maximum context length (?:is|of) (\d+)/i)?.[1];
  if (context === undefined) return null;
  const prompt = message.match(
    /(\d+) (?:tokens )?in the (?:messages|prompt)|(\d+) input tokens|(\d+) tokens from the input/i,
  );
  const p = prompt ? Number(prompt[1] ?? prompt[2] ?? prompt[3]) : null;
  return { context: Number(context), prompt: p, perSlot: false };
}

/** True when the message is a server's "too long for the context" rejection, numbers stated or not. */
export function isContextError(message: string): boolean {
  return parseContextLimit(message) !== null || BARE.test(message);
}

/**
 * Advice for a request rejected for its length: the largest --max-tokens that fits this problem's prompt
 * (context − prompt tokens), or that the prompt alone is too long; "" when the message is no context rejection.
 */
export function maxTokensAdvice(message: string, maxTokens: number): string {
  const limit = parseContextLimit(message);
  if (limit === null) {
    return BARE.test(message)
      ? `the prompt and --max-tokens ${maxTokens} do not fit the server's context: lower --max-tokens or ` +
        `raise the server's context`
      : "";
  }
  // llama.cpp rejects only a prompt that fills the slot (it cuts a long reply at the context instead).
  const raise = limit.perSlot
    ? "start llama-server with a larger -c (it is shared among its --parallel slots)"
    : "no --max-tokens fits";
  if (limit.prompt === null) {
    return `the model's context is ${limit.context} tokens: lower --max-tokens ${maxTokens} below it by the prompt's length`;
  }
  const fit = limit.context - limit.prompt;
  if (fit < 1) {
    return `the prompt alone (${limit.prompt} tokens) fills the ${limit.context}-token context; ${raise}`;
  }
  return `--max-tokens ${fit} would fit (context ${limit.context} − prompt ${limit.prompt} tokens)`;
}
