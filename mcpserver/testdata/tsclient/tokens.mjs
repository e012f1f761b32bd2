// Token counts of a text by published tokenizers: Anthropic's Claude
// tokenizer (@anthropic-ai/tokenizer, the one Anthropic published; its
// README says it is not exact for Claude 3 and later models) and OpenAI's
// cl100k_base and o200k_base (js-tiktoken). Claude's current tokenizer is
// not public: these bracket what a model pays, and orbit's own estimate
// (bytes / 3) is checked against them.
//
//   node tokens.mjs FILE...   prints one JSON object per file
import { countTokens } from '@anthropic-ai/tokenizer';
import { getEncoding } from 'js-tiktoken';
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

const encodings = {};
function encoding(name) {
  encodings[name] ??= getEncoding(name);
  return encodings[name];
}

export function tokens(text) {
  return {
    bytes: Buffer.byteLength(text, 'utf8'),
    claude: countTokens(text),
    cl100k: encoding('cl100k_base').encode(text).length,
    o200k: encoding('o200k_base').encode(text).length,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const f of process.argv.slice(2)) {
    console.log(JSON.stringify({ file: f, ...tokens(fs.readFileSync(f, 'utf8')) }));
  }
}
