/**
 * The console examples of the Markdown documents (`$ ` lines of `console` and unlabelled code
 * blocks, with the output shown below each), and the comparison of what a run printed with what
 * the document shows: the same lines in the same order once the parts that change at every run
 * (ports, times, durations, rates, process ids, key fingerprints, the home folder) are
 * normalised; `…` or `...` in a shown line stands for any text, alone on its line for any lines.
 */

export interface DocExample {
  file: string;
  /** 1-based line of the `$ ` line in the Markdown file. */
  line: number;
  /** The command as typed (continuation lines joined, no `$ ` prompt). */
  command: string;
  /** The lines the document shows below the command, up to the next `$ ` line or the block's end. */
  output: string[];
}

/** The `$ ` examples of a Markdown text, in document order. */
export function docExamples(file: string, markdown: string): DocExample[] {
  const found: DocExample[] = [];
  let lang: string | undefined;
  let current: DocExample | undefined;
  let continued = false;
  markdown.split('\n').forEach((raw, index) => {
    const fence = /^```\s*([\w-]*)/.exec(raw);
    if (fence) {
      lang = lang === undefined ? (fence[1] ?? '') : undefined;
      current = undefined;
      continued = false;
      return;
    }
    if (lang === undefined || !['console', ''].includes(lang)) return;
    if (continued && current) {
      current.command += ` ${raw.trim()}`;
    } else if (raw.startsWith('$ ')) {
      current = { file, line: index + 1, command: raw.slice(2).trim(), output: [] };
      found.push(current);
    } else if (current) {
      current.output.push(raw);
      return;
    } else {
      return;
    }
    continued = current.command.endsWith('\\');
    if (continued) current.command = current.command.slice(0, -1).trimEnd();
  });
  for (const example of found) {
    while (example.output.length > 0 && example.output.at(-1)!.trim() === '') example.output.pop();
  }
  return found;
}

export interface Normalising {
  /** The home folder of the run, shown as /home/me in the documents. */
  home?: string;
  /** The copy of the repository the run works in, shown as /home/me/ordercli in the documents. */
  checkout?: string;
}

/** Text with what changes at every run replaced by fixed words. */
export function normalise(text: string, options: Normalising = {}): string {
  let out = text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
  if (options.checkout) out = out.replaceAll(options.checkout, '/home/me/ordercli');
  if (options.home) out = out.replaceAll(options.home, '/home/me');
  return out
    .replace(/\b(127\.0\.0\.1|localhost):\d+/g, '127.0.0.1:<port>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?/g, '<time>')
    .replace(/\bin \d[\d.,]* (s|ms)\b/g, 'in <n> $1')
    .replace(/\(\d[\d.,]*\/s\)/g, '(<n>/s)')
    .replace(/\b(time|timestamp)="[^"]*"/g, '$1="<t>"')
    .replace(/sha256:[0-9a-f]{8}/g, 'sha256:<hash>')
    .replace(/whk_[0-9A-Za-z_]+/g, 'whk_<key>')
    .replace(/\bSO-\d{4}-9\d{5}\b/g, 'SO-<random>')
    .replace(/\bpid \d+ on \S+/g, 'pid <n> on <host>')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
}

function isElision(line: string): boolean {
  return /^\s*(…|\.\.\.)\s*$/.test(line);
}

function lineMatches(shown: string, printed: string): boolean {
  if (shown === printed) return true;
  if (!/…|\.\.\./.test(shown)) return false;
  const pattern = shown
    .split(/…|\.\.\./)
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`).test(printed);
}

/**
 * The shown lines that the printed text lacks: each shown line (normalised, blank ones aside) must
 * be a printed line, in the shown order; an elision line lets any printed lines pass. Empty when
 * the output has the document's shape.
 */
export function missingLines(shown: string[], printed: string, options: Normalising = {}): string[] {
  const want = normalise(shown.join('\n'), options)
    .split('\n')
    .filter((line) => line.trim() !== '');
  const have = normalise(printed, options).split('\n');
  const missing: string[] = [];
  let at = 0;
  for (const line of want) {
    if (isElision(line)) continue;
    const found = have.findIndex((printedLine, index) => index >= at && lineMatches(line, printedLine));
    if (found === -1) missing.push(line);
    else at = found + 1;
  }
  return missing;
}
