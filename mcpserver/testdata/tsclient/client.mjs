// The official TypeScript MCP SDK's client against the real orbit binary:
// it lists the tools, records a decision and an outcome, searches
// precedents, makes one refused call, and prints what it saw as one JSON
// object for mcpserver's TestTypeScriptClient to check (with the journal
// and the index).
//
//   node client.mjs ORBIT_BINARY PROJECT_ROOT
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { tokens } from './tokens.mjs';

const [bin, root] = process.argv.slice(2);
if (!bin || !root) {
  console.error('usage: node client.mjs ORBIT_BINARY PROJECT_ROOT');
  process.exit(2);
}

const transport = new StdioClientTransport({ command: bin, args: ['mcp', '--root', root], stderr: 'inherit' });
const client = new Client({ name: 'orbit-ts-test', version: '1.0.0' });
await client.connect(transport);

// A result is two text blocks: the short rendering, then the JSON.
function parse(name, res) {
  if (res.isError) throw new Error(`${name}: tool error: ${res.content[0].text}`);
  if (res.content.length !== 2 || res.content.some((c) => c.type !== 'text')) {
    throw new Error(`${name}: want two text blocks, got ${JSON.stringify(res.content)}`);
  }
  return { text: res.content[0].text, json: JSON.parse(res.content[1].text) };
}

const out = {};
const { tools } = await client.listTools();
out.tools = tools.map((t) => t.name);
out.toolList = tokens(JSON.stringify(tools));

const decided = parse('decide', await client.callTool({
  name: 'decide',
  arguments: {
    title: 'Move the session store to SQLite', category: 'architecture', impact: 'medium', reversible: true,
    decision: 'APPROVED', reason: 'single writer, reversible behind the interface', next_action: 'write the adapter', confidence: 0.7,
  },
}));
out.decision = decided.json;
out.decisionText = decided.text;

const retro = parse('retro', await client.callTool({
  name: 'retro', arguments: { id: decided.json.id, outcome: 'CORRECT', evidence: 'adapter merged, CI green' },
}));
out.retro = retro.json;

const hits = parse('precedent', await client.callTool({
  name: 'precedent', arguments: { query: 'session store SQLite', category: 'architecture', k: 3 },
}));
out.precedent = hits.json;

const refused = await client.callTool({ name: 'decide', arguments: { title: 'x', category: 'qualty', impact: 'low', reversible: true } });
out.refused = { isError: refused.isError === true, text: refused.content[0].text };

await client.close();
console.log(JSON.stringify(out));
