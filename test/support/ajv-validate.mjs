// Plays `npx -p ajv-cli -p ajv-formats -- ajv validate --spec=draft2020 -c ajv-formats -s <schema>
// -d "<dir>/*.json"` for the recipe tests (test/release/ci-recipes.test.ts), which reach no
// registry: ajv and ajv-formats as installed here (dependencies of the dev tools), the same checks.
// Prints `<file> valid` or `<file> invalid` with the errors, and exits 1 when a file is invalid.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const args = process.argv.slice(2);
const value = (flag) => args[args.indexOf(flag) + 1];
if (!args.includes('--spec=draft2020') || value('-c') !== 'ajv-formats') {
  console.error(`ajv play: arguments not played: ${args.join(' ')}`);
  process.exit(2);
}
const ajv = new Ajv2020({ allErrors: args.includes('--all-errors'), strict: false });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(value('-s'), 'utf8')));
const pattern = value('-d');
const suffix = basename(pattern).replace(/^\*/, '');
const files = readdirSync(dirname(pattern))
  .filter((name) => name.endsWith(suffix))
  .map((name) => join(dirname(pattern), name));
let invalid = 0;
for (const file of files) {
  if (validate(JSON.parse(readFileSync(file, 'utf8')))) console.log(`${file} valid`);
  else {
    invalid++;
    console.error(`${file} invalid\n${ajv.errorsText(validate.errors)}`);
  }
}
process.exit(files.length === 0 || invalid > 0 ? 1 : 0);
