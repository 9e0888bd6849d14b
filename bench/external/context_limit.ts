// Reading a server's "prompt + max_tokens exceeds the context" rejection, to say which --max-tokens would fit.

/** The context length and prompt tokens stated in a server's error message, when it states them. */
export interface ContextLimit {
  /** The model's context length in tokens. */
  context: number;
  /** Tokens of the prompt, or null when the message gives only the total requested. */
  prompt: number | null;
}

/**
 * Parse the context-limit messages of vLLM ("This model's maximum context length is 4096 tokens. However, you
 * requested 4596 tokens (500 in the messages, 4096 in the completion)", "... and your request has 69 input
 * tokens"), OpenAI (same wording) and SGLang ("maximum context length of 2048 tokens ... 100 tokens from the
 * input"). Returns null for any other message.
 */
export function parseContextLimit(message: string): ContextLimit | null {
  const context = message.match(/maximum context length (?:is|of) (\d+)/i)?.[1];
  if (context === undefined) return null;
  const prompt = message.match(
    /(\d+) (?:tokens )?in the (?:messages|prompt)|(\d+) input tokens|(\d+) tokens from the input/i,
  );
  const p = prompt ? Number(prompt[1] ?? prompt[2] ?? prompt[3]) : null;
  return { context: Number(context), prompt: p };
}

/**
 * Advice for a request rejected for its length: the largest --max-tokens that fits this problem's prompt
 * (context − prompt tokens), or that the prompt alone is too long; "" when the message states no limit.
 */
export function maxTokensAdvice(message: string, maxTokens: number): string {
  const limit = parseContextLimit(message);
  if (limit === null) return "";
  if (limit.prompt === null) {
    return `the model's context is ${limit.context} tokens: lower --max-tokens ${maxTokens} below it by the prompt's length`;
  }
  const fit = limit.context - limit.prompt;
  if (fit < 1) {
    return `the prompt alone (${limit.prompt} tokens) fills the model's ${limit.context}-token context; no --max-tokens fits`;
  }
  return `--max-tokens ${fit} would fit (context ${limit.context} − prompt ${limit.prompt} tokens)`;
}
