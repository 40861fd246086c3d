/**
 * What a terminal shows after some output: a small model of the screen for the escape sequences
 * prompts use (cursor moves, erasing lines, colours ignored), so that a test can say a prompt was
 * erased, not only that it was written. Lines wrap at `columns`; the screen never scrolls away.
 */
export function screenLines(output: string, columns = 100): string[] {
  const lines: string[][] = [[]];
  let row = 0;
  let col = 0;
  const line = () => {
    while (lines.length <= row) lines.push([]);
    return lines[row]!;
  };
  const sequence = /^\x1b\[([?0-9;]*)([A-Za-z])/;
  for (let at = 0; at < output.length; ) {
    const char = output[at]!;
    if (char === '\x1b') {
      const match = sequence.exec(output.slice(at));
      if (match === null) {
        at++;
        continue;
      }
      at += match[0].length;
      const n = Number.parseInt(match[1] ?? '', 10);
      const count = Number.isNaN(n) ? 1 : n;
      switch (match[2]) {
        case 'A':
          row = Math.max(0, row - count);
          break;
        case 'B':
          row += count;
          break;
        case 'C':
          col += count;
          break;
        case 'D':
          col = Math.max(0, col - count);
          break;
        case 'G':
          col = Number.isNaN(n) ? 0 : n - 1;
          break;
        case 'K':
          if (match[1] === '2') line().length = 0;
          else if (match[1] === '1') line().fill(' ', 0, col);
          else line().length = Math.min(line().length, col);
          break;
        case 'J':
          line().length = Math.min(line().length, col);
          lines.length = row + 1;
          break;
        default:
        // Colours (m), cursor shown or hidden (?25h/l): nothing on the screen changes.
      }
      continue;
    }
    at++;
    if (char === '\r') col = 0;
    else if (char === '\n') {
      row++;
      col = 0;
    } else {
      if (col >= columns) {
        row++;
        col = 0;
      }
      const current = line();
      while (current.length < col) current.push(' ');
      current[col] = char;
      col++;
    }
  }
  return lines.map((cells) => cells.join('').trimEnd());
}
