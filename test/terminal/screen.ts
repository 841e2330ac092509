/**
 * What a terminal would show after the given output: a small model of the
 * screen (printable characters with autowrap, CR, LF, backspace, and the CSI
 * cursor moves and erases the client and readline use; colours and modes
 * ignored), so a test can check what is on screen rather than what bytes
 * passed. Rows that scrolled off the top are kept: the model has no height.
 */
export function screenOf(output: string, columns: number): string[] {
  const rows: string[][] = [[]];
  let row = 0;
  let column = 0;
  /** The cursor sits past the last column until the next character wraps it. */
  let pendingWrap = false;
  const line = () => (rows[row] ??= []);
  const put = (char: string) => {
    if (pendingWrap) {
      row++;
      column = 0;
      pendingWrap = false;
    }
    const cells = line();
    while (cells.length < column) cells.push(' ');
    cells[column] = char;
    if (column === columns - 1) pendingWrap = true;
    else column++;
  };
  for (let i = 0; i < output.length; i++) {
    const char = output[i];
    if (char === '\x1b') {
      const csi = /^\x1b\[([?0-9;]*)([A-Za-z@`~])/.exec(output.slice(i, i + 32));
      if (!csi) {
        // Any other escape (none should reach here in these tests) is skipped with its next character.
        i++;
        continue;
      }
      i += csi[0].length - 1;
      const n = parseInt(csi[1], 10);
      const count = Number.isNaN(n) ? 1 : Math.max(1, n);
      pendingWrap = false;
      switch (csi[2]) {
        case 'A':
          row = Math.max(0, row - count);
          break;
        case 'B':
          row += count;
          break;
        case 'C':
          column = Math.min(columns - 1, column + count);
          break;
        case 'D':
          column = Math.max(0, column - count);
          break;
        case 'G':
          column = Math.min(columns - 1, count - 1);
          break;
        case 'K': {
          const cells = line();
          const mode = Number.isNaN(n) ? 0 : n;
          if (mode === 0) cells.length = Math.min(cells.length, column);
          else if (mode === 1) for (let c = 0; c <= column && c < cells.length; c++) cells[c] = ' ';
          else cells.length = 0;
          break;
        }
        case 'J': {
          const mode = Number.isNaN(n) ? 0 : n;
          if (mode === 0) {
            line().length = Math.min(line().length, column);
            rows.length = row + 1;
          } else if (mode === 2) {
            for (const cells of rows) cells.length = 0;
          }
          break;
        }
        default:
          // Colours (m), modes (h, l) and the rest change nothing on this screen.
          break;
      }
      continue;
    }
    if (char === '\r') {
      column = 0;
      pendingWrap = false;
    } else if (char === '\n') {
      row++;
      pendingWrap = false;
    } else if (char === '\b') {
      column = Math.max(0, column - 1);
      pendingWrap = false;
    } else if (char >= ' ') {
      put(char);
    }
  }
  return Array.from({ length: rows.length }, (_, r) => (rows[r] ?? []).join('').replace(/\s+$/, ''));
}
