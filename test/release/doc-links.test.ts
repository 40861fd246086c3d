/**
 * README.md and docs/*.md link only to files of the repository: every relative link points to a
 * file (or folder) that exists, inside the repository (no `../` out of it, no absolute path, no
 * file: URL), and an anchor into a Markdown file names one of its headings.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';
import { documents, links, readDocument } from './markdown.js';

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  let inBlock = false;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line.startsWith('```')) inBlock = !inBlock;
    const heading = inBlock ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (heading?.[1]) anchors.add(anchor(heading[1]));
  }
  return anchors;
}

/** What is wrong with a link, or undefined when it points to a file of the repository. */
function problemOf(file: string, target: string): string | undefined {
  if (/^(https?:|mailto:)/i.test(target)) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return `${target} is not a link into the repository`;
  if (target.startsWith('/') || target.startsWith('~')) return `${target} is an absolute path`;
  const [pathPart = '', fragment] = target.split('#');
  const path = decodeURIComponent(pathPart);
  const absolute = path === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), path);
  const inside = relative(ROOT, absolute);
  if (inside === '..' || inside.startsWith(`..${sep}`)) return `${target} points outside the repository`;
  if (!existsSync(absolute)) return `${target} does not exist (${inside})`;
  if (fragment !== undefined && absolute.endsWith('.md') && statSync(absolute).isFile()) {
    if (!anchorsOf(absolute).has(fragment)) return `${target}: ${inside} has no heading #${fragment}`;
  }
  return undefined;
}

describe('links in README.md and docs/*.md', () => {
  it('point to existing files inside the repository', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const file of documents()) {
      for (const link of links(file, readDocument(file))) {
        checked++;
        const problem = problemOf(file, link.target);
        if (problem) problems.push(`${link.file}:${link.line}: ${problem}`);
      }
    }
    expect(problems, problems.join('\n')).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it('name no path outside the repository, in code spans either (../, the shared folder)', () => {
    const problems: string[] = [];
    for (const file of documents()) {
      let inBlock = false;
      readDocument(file)
        .split('\n')
        .forEach((line, index) => {
          if (line.startsWith('```')) inBlock = !inBlock;
          if (inBlock) return;
          const where = `${file}:${index + 1}`;
          if (/\/work\/shared|\bshared\/(STYLE|CLI-CONTRACT|order-service-interface)/i.test(line))
            problems.push(
              `${where}: names the shared folder, which is not in the repository: ${line.trim()}`,
            );
          for (const match of line.matchAll(/`(\.\.\/[^`\s]*)`/g)) {
            const problem = problemOf(file, match[1]!);
            if (problem) problems.push(`${where}: ${problem}`);
          }
        });
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('are found and judged as intended (the checker itself)', () => {
    const found = links(
      'docs/x.md',
      '[a](one.md) `[b](not-a-link.md)` [c](../up.md#x "title")\n```\n[d](in-code.md)\n```\n[e]: ref.md',
    ).map((link) => link.target);
    expect(found).toEqual(['one.md', '../up.md#x', 'ref.md']);
    expect(problemOf('README.md', 'docs/cli-contract.md')).toBeUndefined();
    expect(problemOf('docs/webhooks.md', 'cli-contract.md#ctrl-c')).toBeUndefined();
    expect(problemOf('README.md', '#try-it-the-sandbox')).toBeUndefined();
    expect(problemOf('docs/refs.md', '../README.md')).toBeUndefined();
    expect(problemOf('README.md', '../shared/STYLE.md')).toMatch(/outside the repository/);
    expect(problemOf('docs/refs.md', '../../shared/STYLE.md')).toMatch(/outside the repository/);
    expect(problemOf('README.md', '/work/shared/STYLE.md')).toMatch(/absolute path/);
    expect(problemOf('README.md', 'file:///work/shared/STYLE.md')).toMatch(/not a link into/);
    expect(problemOf('README.md', 'docs/missing.md')).toMatch(/does not exist/);
    expect(problemOf('README.md', 'docs/cli-contract.md#no-such-heading')).toMatch(/no heading/);
  });
});
