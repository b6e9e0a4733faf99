// Tokenises texts with a TextMate grammar the way VS Code does (vscode-textmate on Oniguruma),
// for the Python tests beside it: reads a JSON list of texts on stdin and writes, for each, a
// list of [line, start, end, scopes] tokens. The engine comes from the extension's npm packages:
//   NODE_PATH=vscode-extension/node_modules node textmate_tokenize.js GRAMMAR.json < texts.json
'use strict';
const fs = require('node:fs');
const oniguruma = require('vscode-oniguruma');
const textmate = require('vscode-textmate');

async function main() {
  const grammarPath = process.argv[2];
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const raw = textmate.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath);
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scopeName) => (scopeName === raw.scopeName ? raw : null),
  });
  const grammar = await registry.loadGrammar(raw.scopeName);
  const texts = JSON.parse(fs.readFileSync(0, 'utf8'));
  const out = texts.map((text) => {
    const tokens = [];
    let state = textmate.INITIAL;
    text.split(/\r?\n/).forEach((line, n) => {
      const result = grammar.tokenizeLine(line, state);
      for (const t of result.tokens) tokens.push([n, t.startIndex, Math.min(t.endIndex, line.length), t.scopes]);
      state = result.ruleStack;
    });
    return tokens;
  });
  process.stdout.write(JSON.stringify(out));
}

main().catch((error) => {
  console.error(error && error.stack ? error.stack : String(error));
  process.exit(1);
});
