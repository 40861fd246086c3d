/**
 * The shape ENGINEERING.md asks of src/: no function longer than 80 lines, and no control
 * statement (if, loop, switch, try) nested deeper than 4 within its function, so that each step
 * reads on one screen. Measured on the syntax tree with the project's own TypeScript.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

const MAX_LINES = 80;
const MAX_DEPTH = 4;
const K = ts.SyntaxKind;
const CONTROL = new Set([
  K.IfStatement,
  K.ForStatement,
  K.ForOfStatement,
  K.ForInStatement,
  K.WhileStatement,
  K.DoStatement,
  K.TryStatement,
  K.SwitchStatement,
]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `file:line a function of N lines` for a long function, `file:line nested N deep` for deep nesting. */
function shapeProblems(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const line = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const problems: string[] = [];
  const visit = (node: ts.Node, depth: number): void => {
    let inner = depth;
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      inner = 0;
      const lines = source.getLineAndCharacterOfPosition(node.end).line + 2 - line(node);
      if (lines > MAX_LINES) problems.push(`${file}:${line(node)} a function of ${lines} lines`);
    }
    // `else if` continues its `if`; it is not one level deeper.
    const elseIf =
      ts.isIfStatement(node) && ts.isIfStatement(node.parent) && node.parent.elseStatement === node;
    if (CONTROL.has(node.kind) && !elseIf) {
      inner = depth + 1;
      if (inner > MAX_DEPTH) problems.push(`${file}:${line(node)} nested ${inner} deep`);
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(source, 0);
  return problems;
}

describe('the shape of src/', () => {
  it(`has no function over ${MAX_LINES} lines and nothing nested deeper than ${MAX_DEPTH}`, () => {
    const problems = sources(join(ROOT, 'src')).flatMap((path) =>
      shapeProblems(relative(ROOT, path), readFileSync(path, 'utf8')),
    );
    expect(problems).toEqual([]);
  });

  it('would name a long function and a deep nesting', () => {
    const long = `function f() {\n${'  x();\n'.repeat(85)}}\n`;
    expect(shapeProblems('a.ts', long)).toEqual(['a.ts:1 a function of 87 lines']);
    const deep = 'function g() { if (a) { for (;;) { while (b) { try { if (c) {} } catch {} } } } }';
    expect(shapeProblems('b.ts', deep)).toEqual(['b.ts:1 nested 5 deep']);
    const chain = 'function h() { if (a) {} else if (b) {} else if (c) {} else if (d) {} else if (e) {} }';
    expect(shapeProblems('c.ts', chain)).toEqual([]);
  });
});
