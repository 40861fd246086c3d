#!/usr/bin/env node
// Peak memory (RSS) and time of `ordercli orders import <file> --dry-run` on hostile workbooks
// (issue 31, item 3), generated here without ever holding their inflated text:
//   - strings: 22 MB of zip whose shared strings expand to 3.2 GB (100,000 strings of 32 KiB),
//     about 146 times its size, under the 200 ratio a zip bomb is refused at;
//   - strings-250m: shared strings of 250 MiB, just under the 256 MiB limit (imported);
//   - one-string: 2.5 MB of zip holding one shared string of 400 MB (a ratio of 159);
//   - one-string-200m: one shared string of 200 MB, under the shared strings limit but over the
//     order limit for one text (refused when its first megabyte is read).
// Their deflate streams are written by hand (fixed Huffman codes, a run of one byte as copies of
// 258 bytes at distance 1: 13 bits for 258 bytes), so writing them takes a few seconds.
// Not a test (test/commands/orders/import.hostile-workbooks.test.ts writes such files too): run it
// by hand. Needs GNU time (/usr/bin/time) for the child's peak RSS; nothing is sent anywhere.
// Figures: docs/orders-input.md, "Size". BENCH_BIN=<bin/ordercli.js> runs another build.
//
// Usage: npm run build && node bench/xlsx-hostile.mjs [--keep]
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { deflateRawSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = process.env.BENCH_BIN ?? join(root, 'bin/ordercli.js');
const { values } = parseArgs({ options: { keep: { type: 'boolean', default: false } } });
const work = mkdtempSync(join(tmpdir(), 'ordercli-bench-xlsx-hostile-'));

/** Writes a raw deflate stream bit by bit (fixed Huffman codes, one block). */
class FixedDeflate {
  bytes = new Uint8Array(1 << 20);
  length = 0;
  bits = 0;
  count = 0;
  /** Uncompressed bytes described so far. */
  size = 0;

  constructor() {
    this.write(1, 1); // BFINAL
    this.write(1, 2); // BTYPE 01: fixed Huffman codes
  }

  write(value, n) {
    this.bits |= value << this.count;
    this.count += n;
    while (this.count >= 8) {
      if (this.length === this.bytes.length) {
        const grown = new Uint8Array(this.bytes.length * 2);
        grown.set(this.bytes);
        this.bytes = grown;
      }
      this.bytes[this.length++] = this.bits & 0xff;
      this.bits >>>= 8;
      this.count -= 8;
    }
  }

  /** A Huffman code, most significant bit first. */
  code(code, n) {
    let reversed = 0;
    for (let i = 0; i < n; i++) reversed |= ((code >> i) & 1) << (n - 1 - i);
    this.write(reversed, n);
  }

  literal(byte) {
    if (byte < 144) this.code(0x30 + byte, 8);
    else this.code(0x190 + byte - 144, 9);
    this.size++;
  }

  text(string) {
    for (const byte of Buffer.from(string)) this.literal(byte);
  }

  /** `count` times the ASCII character `char`: one literal, then copies of the byte before. */
  run(char, count) {
    this.literal(char.charCodeAt(0));
    let left = count - 1;
    while (left >= 258) {
      this.code(0xc5, 8); // length 258: symbol 285
      this.write(0, 5); // distance 1: code 0
      left -= 258;
      this.size += 258;
    }
    for (; left > 0; left--) this.literal(char.charCodeAt(0));
  }

  end() {
    this.code(0, 7); // end of block: symbol 256
    if (this.count > 0) this.write(0, 8 - this.count);
    return { data: this.bytes.subarray(0, this.length), size: this.size };
  }
}

/** A zip of the given parts (deflated), its directory declaring their true sizes (no CRC). */
function writeZip(path, parts) {
  const fd = openSync(path, 'w');
  const centrals = [];
  let offset = 0;
  for (const [name, content] of Object.entries(parts)) {
    const { data, size } =
      content instanceof FixedDeflate
        ? content.end()
        : { data: deflateRawSync(Buffer.from(content)), size: Buffer.byteLength(content) };
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    writeSync(fd, local);
    writeSync(fd, nameBytes);
    writeSync(fd, data);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  writeSync(fd, directory);
  writeSync(fd, end);
  closeSync(fd);
}

const NS = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
const COLUMNS = [
  'externalId',
  'contact.internalReferenceId',
  'customer.name',
  'item.internalReferenceId',
  'item.orderedQuantity',
];
const inline = (ref, text) => `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;

/** A workbook of one order whose customer.name is shared string 0, beside `strings`. */
function writeWorkbook(path, strings) {
  const header = COLUMNS.map((column, i) => inline(`${'ABCDE'[i]}1`, column)).join('');
  const row = `${inline('A2', 'SO-1')}<c r="B2"><v>301</v></c><c r="C2" t="s"><v>0</v></c><c r="D2"><v>401</v></c><c r="E2"><v>1</v></c>`;
  writeZip(path, {
    'xl/workbook.xml': `<workbook ${NS} xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Commandes" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    'xl/_rels/workbook.xml.rels':
      '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
    'xl/worksheets/sheet1.xml': `<worksheet ${NS}><sheetData><row r="1">${header}</row><row r="2">${row}</row></sheetData></worksheet>`,
    'xl/sharedStrings.xml': strings,
  });
}

function sharedStrings(count, bytes) {
  const deflate = new FixedDeflate();
  deflate.text(`<sst ${NS} count="${count}" uniqueCount="${count}">`);
  for (let i = 0; i < count; i++) {
    deflate.text('<si><t>');
    deflate.run('a', bytes);
    deflate.text('</t></si>');
  }
  deflate.text('</sst>');
  return deflate;
}

const cases = [
  {
    name: 'strings',
    what: 'shared strings of 3.2 GB (100,000 of 32 KiB)',
    strings: () => sharedStrings(100_000, 32 * 1024),
  },
  {
    name: 'strings-250m',
    what: 'shared strings of 250 MiB (8,000 of 32 KiB), under the limit',
    strings: () => sharedStrings(8_000, 32 * 1024),
  },
  { name: 'one-string', what: 'one shared string of 400 MB', strings: () => sharedStrings(1, 400_000_000) },
  {
    name: 'one-string-200m',
    what: 'one shared string of 200 MB, under the shared strings limit',
    strings: () => sharedStrings(1, 200_000_000),
  },
];

for (const { name, what, strings } of cases) {
  const file = join(work, `${name}.xlsx`);
  const parts = strings();
  const inflated = parts.size;
  writeWorkbook(file, parts);
  const size = statSync(file).size;
  const started = performance.now();
  const run = spawnSync(
    '/usr/bin/time',
    ['-v', process.execPath, bin, 'orders', 'import', file, '--dry-run'],
    {
      encoding: 'utf8',
      env: { ...process.env, ORDERCLI_CONFIG_DIR: join(work, `config-${name}`) },
    },
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr)?.[1];
  const said = run.stderr
    .split('\n')
    .filter((line) => !/^\s/.test(line) && !line.startsWith('Command ') && line.trim() !== '')
    .join(' | ');
  console.log(
    `${name}: ${what}; ${(size / 1e6).toFixed(1)} MB expanding to ${(inflated / 1e9).toFixed(2)} GB of shared strings (ratio ${Math.round(inflated / size)})`,
  );
  console.log(
    `  exit ${run.status}, ${seconds} s, peak RSS ${rss ? `${(Number(rss) / 1024).toFixed(0)} MiB` : 'unknown'}: ${said.slice(0, 400)}`,
  );
}
if (values.keep) console.log(`kept in ${work}`);
else rmSync(work, { recursive: true, force: true });
