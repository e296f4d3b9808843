// Writes the trace items the OpenAI Agents JS SDK exports (Trace and Span
// toJSON(), in the order its BatchTraceProcessor buffers them: a trace when
// it starts, a span when it ends), one a line, for a triage agent that looks
// up an order and hands off to a refunds agent. The model is the SDK's own
// ScriptedModel (no network).
import { Agent, Runner, tool, setTraceProcessors, setTracingDisabled } from '@openai/agents';
import { ScriptedModel, functionCall, assistantMessage } from '@openai/agents-core/testing';
import { z } from 'zod';
import { writeFileSync } from 'node:fs';

const items = [];
class Collect {
  async onTraceStart(t) { items.push(t.toJSON()); }
  async onTraceEnd() {}
  async onSpanStart() {}
  async onSpanEnd(s) { items.push(s.toJSON()); }
  async shutdown() {}
  async forceFlush() {}
}
setTraceProcessors([new Collect()]);
setTracingDisabled(false);

const lookup = tool({ name: 'lookup_order', description: 'Look up an order', parameters: z.object({ id: z.string() }), execute: async () => 'order 42: shipped' });
const refund = tool({ name: 'issue_refund', description: 'Refund an order', parameters: z.object({ id: z.string() }),
  execute: async ({ id }) => { if (id === 'bad') throw new Error('refund declined'); return 'refunded'; } });

const n = Number(process.argv[3] || 2);
for (let k = 1; k <= n; k++) {
  const conv = 'conv-' + k, refundId = k % 2 ? '42' : 'bad';
  const refundsModel = new ScriptedModel([
    [functionCall('issue_refund', { id: refundId }, { callId: 'c2' })],
    [assistantMessage('Done.')],
  ]);
  const refunds = new Agent({ name: 'Refunds', instructions: 'Refund orders.', model: refundsModel, tools: [refund] });
  const triageModel = new ScriptedModel([
    [functionCall('lookup_order', { id: '42' }, { callId: 'c1' })],
    [functionCall('transfer_to_Refunds', {}, { callId: 'c3' })],
  ]);
  const triage = new Agent({ name: 'Triage', instructions: 'Route.', model: triageModel, tools: [lookup], handoffs: [refunds] });
  await new Runner({ workflowName: 'Support', groupId: conv, tracingDisabled: false }).run(triage, 'I want a refund for order 42');
}
await new Promise((r) => setTimeout(r, 50));
writeFileSync(process.argv[2], items.map((i) => JSON.stringify(i)).join('\n') + '\n');
