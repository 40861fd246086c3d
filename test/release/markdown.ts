/**
 * What the release tests read in the Markdown documents: the command lines of their code blocks
 * and their links.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/cli.js';

/** README.md and docs/*.md, as paths relative to the repository. */
export function documents(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

export interface CommandLine {
  file: string;
  /** 1-based line of the Markdown file where the command starts. */
  line: number;
  /** The command as a reader types it (continuation lines joined, no `$ ` prompt). */
  text: string;
}

/**
 * The command lines of a Markdown text's code blocks: every line of a `sh`/`bash`/`shell` block
 * (comments and blank lines aside), and the `$ ` lines of `console` and unlabelled blocks (the rest
 * of those is output).
 */
export function commandLines(file: string, markdown: string): CommandLine[] {
  const found: CommandLine[] = [];
  let lang: string | undefined;
  let pending: CommandLine | undefined;
  markdown.split('\n').forEach((raw, index) => {
    const fence = /^```\s*([\w-]*)/.exec(raw);
    if (fence) {
      lang = lang === undefined ? (fence[1] ?? '') : undefined;
      pending = undefined;
      return;
    }
    if (lang === undefined) return;
    let text: string | undefined;
    if (pending) {
      pending.text += ` ${raw.trim()}`;
    } else if (['sh', 'bash', 'shell'].includes(lang)) {
      if (raw.trim() !== '' && !raw.trim().startsWith('#')) text = raw.trim();
    } else if (['console', ''].includes(lang) && raw.startsWith('$ ')) {
      text = raw.slice(2).trim();
    }
    if (text !== undefined) {
      pending = { file, line: index + 1, text };
      found.push(pending);
    }
    if (pending && !pending.text.endsWith('\\')) pending = undefined;
    else if (pending) pending.text = pending.text.slice(0, -1).trimEnd();
  });
  return found;
}

/**
 * The simple commands of a shell line, each as its words: split at `|`, `||`, `&&`, `;`, `&`,
 * `$(`, `<(` and `)` outside quotes; a `#` comment ends the line; leading `NAME=value`
 * assignments are dropped.
 */
export function simpleCommands(line: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let quote: string | undefined;
  let inWord = false;
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] ?? '')) words.shift();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '#' && !inWord) {
      break;
    } else if (/\s/.test(c)) {
      endWord();
    } else if (c === '&' && (line[i - 1] === '>' || line[i + 1] === '>')) {
      word += c; // 2>&1, &>
      inWord = true;
    } else if ('|&;)'.includes(c) || ((c === '$' || c === '<') && line[i + 1] === '(')) {
      if (c === '$' || c === '<') i++;
      endCommand();
    } else {
      word += c;
      inWord = true;
    }
  }
  endCommand();
  return commands;
}

export interface Link {
  file: string;
  line: number;
  target: string;
}

/** The link targets of a Markdown text outside code blocks and code spans: `[text](target)`. */
export function links(file: string, markdown: string): Link[] {
  const found: Link[] = [];
  let inBlock = false;
  markdown.split('\n').forEach((raw, index) => {
    if (/^```/.test(raw)) {
      inBlock = !inBlock;
      return;
    }
    if (inBlock) return;
    const text = raw.replace(/`[^`]*`/g, '');
    for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g))
      found.push({ file, line: index + 1, target: match[1]! });
    for (const match of text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/g))
      found.push({ file, line: index + 1, target: match[1]! });
  });
  return found;
}

export function readDocument(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}
