// Copies the TextMate grammar from the repository's syntax/ folder (its single source of truth)
// into syntaxes/, where package.json's `contributes.grammars` and the packaged .vsix expect it.
// The copy is a build output and is not kept in git.
'use strict';
const fs = require('fs');
const path = require('path');

const source = path.resolve(__dirname, '..', '..', 'syntax', 'tileir.tmLanguage.json');
const targetDir = path.resolve(__dirname, '..', 'syntaxes');
const target = path.join(targetDir, 'tileir.tmLanguage.json');

const text = fs.readFileSync(source, 'utf8');
JSON.parse(text); // fail the build on a broken grammar rather than ship it
fs.mkdirSync(targetDir, { recursive: true });
// Write beside the target and rename, so a reader never sees half a file.
const temporary = target + '.tmp';
fs.writeFileSync(temporary, text);
fs.renameSync(temporary, target);
console.log(`copied ${path.relative(process.cwd(), source)} -> ${path.relative(process.cwd(), target)}`);
