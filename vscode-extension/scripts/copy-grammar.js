// Copies the TextMate grammars from the repository's syntax/ folder (their single source of truth;
// `python -m syntax.generate` keeps their word lists in step with the op table) into syntaxes/,
// where package.json's `contributes.grammars` and the packaged .vsix expect them: the Tile IR
// grammar, the injection that highlights ```tileir fences in Markdown, and the PTX and SASS
// grammars of what Show PTX and Show SASS open.
// The copies are build outputs and are not kept in git.
'use strict';
const fs = require('fs');
const path = require('path');

const GRAMMARS = [
  'tileir.tmLanguage.json',
  'tileir.markdown.tmLanguage.json',
  'ptx.tmLanguage.json',
  'nvidia-sass.tmLanguage.json',
];
const sourceDir = path.resolve(__dirname, '..', '..', 'syntax');
const targetDir = path.resolve(__dirname, '..', 'syntaxes');

fs.mkdirSync(targetDir, { recursive: true });
for (const name of GRAMMARS) {
  const source = path.join(sourceDir, name);
  const target = path.join(targetDir, name);
  if (!fs.existsSync(source)) {
    // Building from a copy of vscode-extension/ alone: the grammars live beside it, in ../syntax.
    console.error(`${source} is missing: build the extension inside the repository (it needs ../syntax/)`);
    process.exit(1);
  }
  const text = fs.readFileSync(source, 'utf8');
  try {
    JSON.parse(text); // fail the build on a broken grammar rather than ship it
  } catch (error) {
    console.error(`${source}: not valid JSON (${error.message}); fix it or rerun python -m syntax.generate`);
    process.exit(1);
  }
  // Write beside the target and rename, so a reader never sees half a file.
  const temporary = target + '.tmp';
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, target);
  console.log(`copied ${path.relative(process.cwd(), source)} -> ${path.relative(process.cwd(), target)}`);
}
