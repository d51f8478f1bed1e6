// Runs @deepagents/compaction's compact() and estimateTokens() on scenarios read as JSON
// from stdin and writes what each returned (and what it asked the model) as JSON.
// The upstream sources (compact.ts, messages.ts) are copied next to this file by
// test_deepagents_differential.py, with a stub of the 'ai' package in node_modules:
// generateText records its arguments and answers with the scenario's summary text.
import { readFileSync } from 'node:fs';

import { compact } from './compact.ts';
import { estimateTokens } from './messages.ts';

interface Scenario {
  messages: unknown[];
  targetTokens: number;
  keepLastMessages: number;
  instructions: string | null;
  summaryText: string;
}

const scenarios = JSON.parse(readFileSync(0, 'utf8')) as Scenario[];
const out: unknown[] = [];
const state = globalThis as unknown as { __calls: unknown[]; __summaryText: string };
for (const s of scenarios) {
  state.__calls = [];
  state.__summaryText = s.summaryText;
  let estimate: number | string;
  try {
    estimate = estimateTokens(s.messages as never);
  } catch (error) {
    estimate = String(error);
  }
  const r = await compact({
    messages: s.messages as never,
    model: {} as never,
    targetTokens: s.targetTokens,
    keepLastMessages: s.keepLastMessages,
    ...(s.instructions === null ? {} : { instructions: s.instructions }),
  });
  out.push({
    estimate,
    status: r.status,
    reason: r.status === 'cannot-fit' ? r.reason : null,
    replacedRange: r.status === 'compacted' ? [r.replacedRange.start, r.replacedRange.end] : null,
    tokens: r.tokens,
    messages: r.messages,
    calls: state.__calls,
  });
}
process.stdout.write(JSON.stringify(out));
