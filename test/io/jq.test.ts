// --jq in this process: the JSON texts cut out of stdout, jq's results as lines, its errors, and the
// IO that filters a command's stdout (the built binary's behaviour is in jq.bin.test.ts).
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/core/errors.js';
import { JqFilteredIO, JqProgram, JsonTexts } from '../../src/io/jq.js';
import { createTestIO } from '../../src/io/memory.js';

describe('JsonTexts', () => {
  it('cuts the top-level JSON texts out of text written in any pieces', () => {
    const text = '[\n  {"a": "x]}\\"[{", "b": [1, {"c": null}]}\n]\n{"k": "v"}\n"s\\\\"  42\ntrue\n[]{}';
    const whole = new JsonTexts();
    const expected = [
      '[\n  {"a": "x]}\\"[{", "b": [1, {"c": null}]}\n]',
      '{"k": "v"}',
      '"s\\\\"',
      '42',
      'true',
      '[]',
      '{}',
    ];
    expect(whole.push(text)).toEqual(expected);
    expect(whole.end()).toBeUndefined();
    // The same text one character at a time: the state carries over from piece to piece.
    const bytewise = new JsonTexts();
    const found = [...text].flatMap((char) => bytewise.push(char));
    expect(found).toEqual(expected);
  });

  it('gives back at the end a value left without its end', () => {
    const texts = new JsonTexts();
    expect(texts.push('{"a": 1}\n12')).toEqual(['{"a": 1}']);
    expect(texts.end()).toBe('12');
    expect(texts.push('[1, ')).toEqual([]);
    expect(texts.end()).toBe('[1, ');
    expect(texts.end()).toBeUndefined();
  });
});

describe('JqProgram', () => {
  it('prints strings raw and other values as compact JSON, one a line, numbers as jq keeps them', async () => {
    const program = await JqProgram.compile('.items[] , .n, .s', []);
    const run = program.run(
      '{"items": ["a b", {"x": [1, 2]}, null, "é\\n2"], "n": 100000000000000000001, "s": "\\u001b[31m"}',
      false,
    );
    expect(run).toEqual({
      lines: ['a b', '{"x":[1,2]}', 'null', 'é\n2', '100000000000000000001', '\u001b[31m'],
      messages: [],
    });
  });

  it('escapes control characters of raw strings on a terminal, line breaks kept', async () => {
    const program = await JqProgram.compile('.[]', []);
    expect(program.run('["\\u001b[31mred", "a\\nb\\tc"]', true).lines).toEqual([
      '\\u001b[31mred',
      'a\nb\\tc',
    ]);
  });

  it('binds each --arg as a string variable, and reads an expression that starts with -', async () => {
    const program = await JqProgram.compile('[$code, $n, -.]', [
      { name: 'code', value: '--not-an-option' },
      { name: 'n', value: '12' },
    ]);
    expect(program.run('3', false).lines).toEqual(['["--not-an-option","12",-3]']);
  });

  it('refuses an expression jq does not compile: one sentence, the place below, exit 2', async () => {
    const error = await JqProgram.compile('.[] | select(.code ==', []).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    const usage = error as UsageError;
    expect(usage.exitCode).toBe(2);
    expect(usage.message).toBe(
      'The --jq expression is not valid jq: syntax error, unexpected end of file at line 1, column 20.',
    );
    expect(usage.details).toEqual(['.[] | select(.code ==', '                   ^^']);
    expect(usage.hint).toMatch(/single quotes/);
  });

  it('refuses a variable that no --arg binds before anything runs', async () => {
    const error = (await JqProgram.compile('$code', []).catch((e: unknown) => e)) as UsageError;
    expect(error.message).toBe(
      'The --jq expression is not valid jq: $code is not defined at line 1, column 1.',
    );
    await expect(JqProgram.compile('$code', [{ name: 'code', value: 'P1' }])).resolves.toBeInstanceOf(
      JqProgram,
    );
  });

  it('reports an error at run time with what came before it, and text that is not JSON', async () => {
    const program = await JqProgram.compile('.[] | .name', []);
    expect(program.run('[{"name": "a"}, "b"]', false)).toEqual({
      lines: ['a'],
      messages: [],
      error: 'Cannot index string with string ("name")',
    });
    expect(program.run('/tmp/config.json', false)).toMatchObject({ lines: [], notJson: true });
    const errorValue = await JqProgram.compile('error({"a": 1})', []);
    expect(errorValue.run('null', false).error).toBe('{"a":1}');
    const halted = await JqProgram.compile('"no code\n" | halt_error', []);
    expect(halted.run('null', false).error).toBe('no code');
  });

  it("passes on what the expression writes on stderr itself (debug), before jq's error", async () => {
    const program = await JqProgram.compile('.[] | debug | .x', []);
    expect(program.run('[{"x": 1}, 2]', false)).toEqual({
      lines: ['1'],
      messages: ['["DEBUG:",{"x":1}]', '["DEBUG:",2]'],
      error: 'Cannot index number with string ("x")',
    });
  });
});

describe('JqFilteredIO', () => {
  it('filters each JSON text as soon as it is complete, and passes stderr through', async () => {
    const io = createTestIO();
    const filtered = new JqFilteredIO(io, await JqProgram.compile('.event', []));
    filtered.out('{"event": "a", ');
    expect(io.stdoutText()).toBe('');
    filtered.out('"body": {}}\n{"event"');
    expect(io.stdoutText()).toBe('a\n');
    filtered.err('progress\n');
    filtered.out(': "b"}\n');
    filtered.end();
    expect(io.stdoutText()).toBe('a\nb\n');
    expect(io.stderrText()).toBe('progress\n');
    expect(filtered.failed).toBe(false);
  });

  it('masks the secrets of the run before jq sees them', async () => {
    const io = createTestIO();
    io.redactor.addSecret('s3cr3t-token-value');
    const filtered = new JqFilteredIO(io, await JqProgram.compile('.token | ascii_upcase', []));
    filtered.out('{"token": "s3cr3t-token-value"}\n');
    expect(io.stdoutText()).toBe('[REDACTED]\n');
  });

  it('says once that the output is not JSON and prints nothing more', async () => {
    const io = createTestIO();
    const filtered = new JqFilteredIO(io, await JqProgram.compile('.', []));
    filtered.out('/home/me/.config/ordercli/config.json\n');
    filtered.out('{"a": 1}\n');
    filtered.end();
    expect(io.stdoutText()).toBe('');
    expect(io.stderrText()).toBe(
      'error: --jq: this command printed text that is not JSON ("/home/me/.config/ordercli/config.json"), so jq has nothing to read: --jq filters what --json prints.\n',
    );
    expect(filtered.failed).toBe(true);
  });

  it('goes on after an error at run time, as jq does with its next input', async () => {
    const io = createTestIO();
    const filtered = new JqFilteredIO(io, await JqProgram.compile('.code', []));
    filtered.out('"not an object"\n{"code": "B"}\n');
    expect(io.stdoutText()).toBe('B\n');
    expect(io.stderrText()).toBe(
      `error: --jq: jq failed on the command's output: Cannot index string with string ("code") (the command itself ran).\n`,
    );
    expect(filtered.failed).toBe(true);
  });
});
