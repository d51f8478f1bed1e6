// A stand-in for the 'ai' package: no model, no network. compact() validates each message
// with modelMessageSchema.parse and calls generateText once; the stub records the call.
export const modelMessageSchema = { parse: (message) => message };

export async function generateText(options) {
  const state = globalThis;
  state.__calls.push({
    instructions: options.instructions,
    prompt: options.prompt,
    maxOutputTokens: options.maxOutputTokens,
  });
  const text = state.__summaryText;
  return { text, finishReason: 'stop', content: [{ type: 'text', text }], totalUsage: undefined };
}
