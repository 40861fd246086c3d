/**
 * The input formats, in ONE list: `--format` and extension detection, the messages that name the
 * formats, `--format`'s help and shell completion, and docs/ENGINEERING.md read it. Each entry
 * says what is known of its format without loading it; its module (`load`) holds the reader and
 * loads only when an input in that format is opened, so that `--help` and completion load none.
 */
import { extname } from 'node:path';
import { UsageError } from '../../core/errors.js';
import { escapeControl } from '../../io/quote.js';
import type { FormatOption, InputFormat } from './input-format.js';

export const INPUT_FORMATS: readonly InputFormat[] = [
  {
    name: 'csv',
    aliases: ['tsv'],
    described: 'CSV input',
    extensions: ['.csv', '.tsv', '.txt'],
    tabular: { noun: 'CSV file' },
    ownOptions: { delimiter: '--delimiter' },
    load: () => import('./csv.js'),
  },
  {
    name: 'json',
    aliases: [],
    described: 'JSON input',
    extensions: ['.json'],
    load: () => import('./json.js'),
  },
  {
    name: 'ndjson',
    aliases: ['jsonl'],
    described: 'NDJSON input',
    extensions: ['.ndjson', '.jsonl'],
    load: () => import('./ndjson.js'),
  },
  {
    name: 'xlsx',
    aliases: [],
    described: 'Excel workbooks (.xlsx)',
    extensions: ['.xlsx'],
    otherExtensions: ['.xlsm'],
    refusedExtensions: {
      '.xls':
        'an old binary Excel file (.xls), which ordercli does not read: open it in Excel and save it as "Excel Workbook (.xlsx)"',
    },
    tabular: { noun: 'workbook' },
    ownOptions: { sheet: '--sheet' },
    load: () => import('./xlsx.js'),
  },
];

/** `a, b or c`: how messages list choices. */
export function orList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

/** The `--format` values, as help and messages list them: `csv, json, ndjson or xlsx`. */
export function formatChoices(): string {
  return orList(INPUT_FORMATS.map((format) => format.name));
}

/** The names shell completion offers for `--format` (the aliases stay accepted). */
export function formatNames(): string[] {
  return INPUT_FORMATS.map((format) => format.name);
}

/** The format `--format` names (a name or an alias, in any case). */
export function formatNamed(value: string): InputFormat {
  const name = value.trim().toLowerCase();
  const known = INPUT_FORMATS.find((format) => format.name === name || format.aliases.includes(name));
  if (!known) throw new UsageError(`Unknown format "${value}": use --format ${formatChoices()}.`);
  return known;
}

/** The format of an input: `--format` when given, else the file's extension. */
export function detectFormat(input: string, format?: string): InputFormat {
  if (format !== undefined) return formatNamed(format);
  if (input === '-') {
    throw new UsageError(
      `Standard input has no file name to tell its format: pass --format ${formatChoices()}.`,
    );
  }
  const extension = extname(input).toLowerCase();
  for (const known of INPUT_FORMATS) {
    const refused = known.refusedExtensions?.[extension];
    if (refused !== undefined) throw new UsageError(`${escapeControl(input)} is ${refused}.`);
  }
  const known = INPUT_FORMATS.find(
    (candidate) => candidate.extensions.includes(extension) || candidate.otherExtensions?.includes(extension),
  );
  if (!known) {
    const named = extension ? ` "${escapeControl(extension)}"` : '';
    const extensions = orList(INPUT_FORMATS.flatMap((candidate) => candidate.extensions));
    throw new UsageError(
      `Cannot tell the format of ${escapeControl(input)} from its extension${named}: name it ${extensions}, or pass --format ${formatChoices()}.`,
    );
  }
  return known;
}

/** The format whose usual extension `path` has (`rejects.xlsx`), if any. */
export function formatOfExtension(path: string): InputFormat | undefined {
  const extension = extname(path).toLowerCase();
  return INPUT_FORMATS.find((format) => format.extensions[0] === extension);
}

/**
 * Refuses the options the chosen format does not read: another format's own option
 * (`--delimiter` for JSON), and the column options of tabular formats for the others.
 */
export function checkFormatOptions(
  format: InputFormat,
  given: Partial<Record<FormatOption | 'map' | 'ignoreColumns', unknown>>,
): void {
  const tabular = INPUT_FORMATS.filter((candidate) => candidate.tabular);
  const columns = `a ${orList(tabular.map((candidate) => candidate.tabular!.noun))}`;
  const others = `${orList(INPUT_FORMATS.filter((candidate) => !candidate.tabular).map((other) => other.name.toUpperCase()))} input`;
  if (!format.tabular && given.map !== undefined) {
    throw new UsageError(`--map renames the columns of ${columns}; it does not apply to ${others}.`);
  }
  if (!format.tabular && given.ignoreColumns !== undefined) {
    throw new UsageError(
      `--ignore-columns leaves out columns of ${columns}; it does not apply to ${others}, whose fields the interface does not show pass through unchanged.`,
    );
  }
  for (const owner of INPUT_FORMATS) {
    if (owner === format) continue;
    for (const [option, flag] of Object.entries(owner.ownOptions ?? {})) {
      if (
        given[option as FormatOption] !== undefined &&
        format.ownOptions?.[option as FormatOption] === undefined
      )
        throw new UsageError(`${flag} applies to ${owner.described} only.`);
    }
  }
}
