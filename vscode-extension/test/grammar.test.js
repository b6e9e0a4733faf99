// Tokenises Tile IR with the TextMate grammar the way VS Code does (vscode-textmate on the
// Oniguruma regex engine) and checks the scopes of hand-picked tokens. Run by `npm test`.
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { test } = require('node:test');
const oniguruma = require('vscode-oniguruma');
const textmate = require('vscode-textmate');

const GRAMMAR = path.resolve(__dirname, '..', 'syntaxes', 'tileir.tmLanguage.json');
const EXAMPLES = path.resolve(__dirname, '..', '..', 'examples');

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (text) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scopeName) =>
      scopeName === 'source.tileir'
        ? textmate.parseRawGrammar(fs.readFileSync(GRAMMAR, 'utf8'), GRAMMAR)
        : null,
  });
  return registry.loadGrammar('source.tileir');
}

/** [text, innermost scope, all scopes] for every token of every line. */
function tokenize(grammar, text) {
  const tokens = [];
  let state = textmate.INITIAL;
  for (const line of text.split(/\r?\n/)) {
    const result = grammar.tokenizeLine(line, state);
    for (const token of result.tokens) {
      const value = line.slice(token.startIndex, token.endIndex);
      tokens.push({ value, scope: token.scopes[token.scopes.length - 1], scopes: token.scopes });
    }
    state = result.ruleStack;
  }
  return tokens;
}

/** The values of the tokens whose innermost scope starts with `prefix`. */
function valuesWithScope(tokens, prefix) {
  return tokens.filter((t) => t.scope.startsWith(prefix)).map((t) => t.value);
}

const SNIPPET = [
  '// a comment',
  'cuda_tile.module @kernels {',
  '  entry @k(%arg0: tile<ptr<f32>>) optimization_hints=<sm_100 = {num_cta_in_cga = 2}> {',
  '    %c = constant <f32: 1.5e+00> : tile<128x32xf32>',
  '    %t, %tok = load_view_tko weak %pv[%i] token = %0 : partition_view<tile=(1024), tensor_view<?xf32, strides=[?]>>, tile<i32> -> tile<1024xf32>, token',
  '    %r = reduce %t dim=0 identities=[0xFF800000 : f32] : tile<1024xf32> -> tile<f32>',
  '    %g = "cuda_tile.addf"(%c, %c) : (!cuda_tile.tile<f32>, !cuda_tile.tile<f32>) -> !cuda_tile.tile<f32>',
  '    print_tko "hello %f", %c : tile<f32> -> token',
  '    %q:2 = get_index_space_shape %pv : partition_view<tile=(4x8), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>> -> tile<i32>',
  '  ^bb0(%x: tile<i1>):',
  '    return',
  '  }',
  '}',
  '// -----',
].join('\n');

test('snippet: each token class gets its scope', async () => {
  const grammar = await loadGrammar();
  const tokens = tokenize(grammar, SNIPPET);
  assert.deepEqual(valuesWithScope(tokens, 'support.function.operation'), [
    'constant',
    'load_view_tko',
    'reduce',
    'print_tko',
    'get_index_space_shape',
    'return',
  ]);
  assert.deepEqual(valuesWithScope(tokens, 'comment.line.double-slash.split-marker'), ['// -----']);
  const comments = tokens.filter((t) => t.scopes.some((s) => s.startsWith('comment.line.double-slash.tileir')));
  assert.equal(comments.map((t) => t.value).join(''), '// a comment');
  const values = valuesWithScope(tokens, 'variable.other.ssa');
  for (const name of ['%arg0', '%c', '%t', '%tok', '%pv', '%i', '%0', '%q', '%x']) {
    assert.ok(values.includes(name), name);
  }
  // `padding_value = zero`: the `=` inside an op is not a result assignment, `zero` is an enum case.
  assert.ok(valuesWithScope(tokens, 'constant.language.tileir').includes('zero'));
  assert.ok(!valuesWithScope(tokens, 'support.function').includes('zero'));
  assert.deepEqual(valuesWithScope(tokens, 'entity.name.function.symbol'), ['@kernels', '@k']);
  assert.deepEqual(valuesWithScope(tokens, 'entity.name.label.block'), ['^bb0']);
  const types = new Set([...valuesWithScope(tokens, 'storage.type'), ...valuesWithScope(tokens, 'entity.name.type.alias')]);
  for (const name of ['tile', 'ptr', 'f32', 'i1', 'i32', 'partition_view', 'tensor_view', 'token', '!cuda_tile.tile']) {
    assert.ok(types.has(name), name);
  }
  assert.deepEqual(valuesWithScope(tokens, 'constant.numeric.hex'), ['0xFF800000']);
  assert.deepEqual(valuesWithScope(tokens, 'constant.numeric.float'), ['1.5e+00']);
  const shapeNumbers = valuesWithScope(tokens, 'constant.numeric.integer.shape');
  assert.deepEqual(shapeNumbers.slice(0, 2), ['128', '32']);
  assert.ok(valuesWithScope(tokens, 'keyword.operator.shape').includes('x'));
  assert.ok(valuesWithScope(tokens, 'string.quoted.double').join('').includes('cuda_tile.addf'));
  assert.equal(valuesWithScope(tokens, 'keyword.other.module')[0], 'module');
  assert.deepEqual(valuesWithScope(tokens, 'keyword.other.structure'), ['entry']);
  assert.ok(valuesWithScope(tokens, 'constant.language.tileir').includes('weak'));
  for (const keyword of ['dim', 'identities', 'optimization_hints']) {
    assert.ok(valuesWithScope(tokens, 'keyword.other.tileir').includes(keyword), keyword);
  }
});

test('examples: every op of every example is scoped as an operation', async () => {
  const grammar = await loadGrammar();
  const files = fs.readdirSync(EXAMPLES).filter((name) => name.endsWith('.tileir'));
  assert.ok(files.length > 0, 'no examples/*.tileir');
  for (const name of files) {
    const text = fs.readFileSync(path.join(EXAMPLES, name), 'utf8');
    const tokens = tokenize(grammar, text);
    // Tokens cover the text exactly (nothing lost, nothing duplicated).
    assert.equal(tokens.map((t) => t.value).join(''), text.split(/\r?\n/).join(''), name);
    // The op of each `%results = op` line, found independently with a plain regex.
    const expected = [...text.matchAll(/^[ \t]*%[^=\n]*?=[ \t]*([a-z_][a-z0-9_]*)/gm)].map((m) => m[1]);
    const ops = valuesWithScope(tokens, 'support.function.operation');
    for (const op of expected) {
      assert.ok(ops.includes(op), `${name}: ${op}`);
    }
    assert.ok(ops.includes('return'), `${name}: return`);
    // Every visible character gets a scope beyond the file's own.
    const unscoped = tokens.filter((t) => t.scopes.length === 1 && t.value.trim() !== '');
    assert.deepEqual(unscoped.map((t) => t.value), [], name);
    // Only the names inside optimization_hints (architectures, hint keys) are plain names.
    for (const word of valuesWithScope(tokens, 'variable.other.name')) {
      assert.match(word, /^(sm_\d+|num_cta_in_cga)$/, `${name}: ${word}`);
    }
  }
});
