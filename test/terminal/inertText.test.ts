import { strict as assert } from 'node:assert';
import { TerminalText, inert, inertJson, term } from '../../client/src/terminal/inertText';
import { LineWriter, TurnPrinter, createStyle, taskCard } from '../../client/src/terminal/render';
import type { DiscussionEvent } from '../../shared/protocol';
import { HOSTILE_SEQUENCES, judgeTerminalOutput } from './hostileText';

/** A writer into a string, as a terminal (colours on) or a pipe. */
function capture(colours: boolean): { writer: LineWriter; text: () => string } {
  let text = '';
  const stream = { write: (chunk: string) => ((text += chunk), true), isTTY: colours } as unknown as NodeJS.WritableStream;
  return { writer: new LineWriter(stream, createStyle(colours)), text: () => text };
}

describe('text from outside made inert for the terminal', () => {
  for (const sequence of HOSTILE_SEQUENCES) {
    it(`leaves nothing a terminal acts on in ${sequence.what}, and shows that something was there`, () => {
      const shown = inert(sequence.text);
      assert.deepEqual(judgeTerminalOutput(shown, { tried: [sequence] }), { foreign: [], reached: [], shown: [sequence.id] });
      assert.match(shown, /[\u2400-\u2421]|<U\+[0-9A-F]{4}>/, 'the controls are replaced by stand-ins, not silently dropped');
    });
  }

  it('shows ESC, CR, backspace and DEL as their control pictures, C1 and bidi controls by code point', () => {
    assert.equal(inert('\x1b]52;c;eA==\x07'), '␛]52;c;eA==␇');
    assert.equal(inert('a\rb\x08c\x7fd\x00'), 'a␍b␈c␡d␀');
    assert.equal(inert('\u009b2J \u009d0;t\u009c'), '<U+009B>2J <U+009D>0;t<U+009C>');
    assert.equal(inert('x\u202ey\u2066z\u2069'), 'x<U+202E>y<U+2066>z<U+2069>');
  });

  it('keeps line ends, tabs and printable text of any script as they are, and turns CRLF into a line end', () => {
    const ordinary = 'def f():\n\treturn "héllo wörld ✓ 漢字 שלום مرحبا 🙂 \u200e\u200f"\n';
    assert.equal(inert(ordinary), ordinary);
    assert.equal(inert('one\r\ntwo\r\n'), 'one\ntwo\n');
  });

  it('works a character at a time, so a sequence cut across streamed pieces is caught as well as a whole one', () => {
    for (const { text } of HOSTILE_SEQUENCES) {
      for (let at = 0; at <= text.length; at++) assert.equal(inert(text.slice(0, at)) + inert(text.slice(at)), inert(text));
    }
  });

  it("the writer makes a plain string inert but keeps the client's own colours, even when both are in one line", () => {
    const tty = capture(true);
    const style = tty.writer.style;
    tty.writer.line(term`${style.red(style.bold('error:'))} ${'\x1b]52;c;eA==\x07 \u009b2J'}`);
    assert.equal(tty.text(), '\x1b[31m\x1b[1merror:\x1b[22m\x1b[39m ␛]52;c;eA==␇ <U+009B>2J\n');
    tty.writer.write('\x1b[2J');
    tty.writer.write(style.cyan('\x1b]0;title\x07'));
    assert.ok(tty.text().endsWith('␛[2J\x1b[36m␛]0;title␇\x1b[39m'));
  });

  it('a styled part put in a plain template literal shows its codes as stand-ins instead of obeying them', () => {
    const tty = capture(true);
    tty.writer.write(`${tty.writer.style.bold('x')}`);
    assert.equal(tty.text(), '␛[1mx␛[22m');
  });

  it('the template tag makes literal parts inert too, so only a colour code can carry an ESC', () => {
    assert.equal(term`a\x1b[2Jb${1}`.value, 'a␛[2Jb1');
    assert.throws(() => TerminalText.sgr(Number.NaN, 0, 'x'), RangeError);
    assert.throws(() => TerminalText.sgr(-1, 0, 'x'), RangeError);
  });

  it('a turn rendered in colour from hostile events carries no escape but the colour codes', () => {
    const out = capture(true);
    const err = capture(true);
    const printer = new TurnPrinter({ answer: out.writer, notes: out.writer, errors: err.writer, settings: { sources: {}, configPath: '/c.json' }, showThinking: true });
    const base = { discussionId: 'disc-1', ts: 0 };
    let seq = 0;
    const events: DiscussionEvent[] = HOSTILE_SEQUENCES.flatMap(({ text }): DiscussionEvent[] => [
      { ...base, seq: seq++, type: 'reasoning_delta', text },
      { ...base, seq: seq++, type: 'assistant_delta', text },
      { ...base, seq: seq++, type: 'tool_call', tool: text, paramsPreview: JSON.stringify({ path: text }) },
      { ...base, seq: seq++, type: 'tool_result', tool: text, ok: false, preview: `Refused: "${text}" is outside the folder` },
      { ...base, seq: seq++, type: 'tool_call', tool: 'grep_files', paramsPreview: `{"pattern":"${text}` },
      { ...base, seq: seq++, type: 'tool_result', tool: 'grep_files', ok: false, preview: text },
      { ...base, seq: seq++, type: 'task_prepared', intent: text, constraints: [text] } as DiscussionEvent,
      { ...base, seq: seq++, type: 'error', message: text },
    ]);
    for (const event of events) printer.event(event);
    printer.event({ ...base, seq, type: 'turn_complete' });
    for (const written of [out.text(), err.text()]) {
      const verdict = judgeTerminalOutput(written);
      assert.deepEqual(verdict.foreign, []);
      assert.deepEqual(verdict.reached, []);
      assert.ok(/\x1b\[3\dm/.test(written), 'colours still work');
    }
    assert.deepEqual(judgeTerminalOutput(out.text()).shown, HOSTILE_SEQUENCES.map((s) => s.id));
    const card = taskCard({ intent: HOSTILE_SEQUENCES[0].text, constraints: [HOSTILE_SEQUENCES[1].text] }, createStyle(true));
    assert.deepEqual(judgeTerminalOutput(card.join('\n')).foreign, []);
  });

  describe('JSON output', () => {
    const value = { text: HOSTILE_SEQUENCES.map((s) => s.text).join('\n') };

    it('JSON.stringify escapes C0 controls but leaves DEL, 8-bit C1 (CSI, OSC) and bidi overrides raw', () => {
      const plain = JSON.stringify({ text: '\x1b\r\x07\x7f\u009b\u009d\u202e' });
      assert.equal(plain, '{"text":"\\u001b\\r\\u0007\x7f\u009b\u009d\u202e"}');
    });

    it('is escaped to hold nothing a terminal acts on, and parses back to the very same strings', () => {
      const shown = inertJson(value).value;
      assert.deepEqual(judgeTerminalOutput(shown).foreign, []);
      assert.deepEqual(JSON.parse(shown), value);
      const indented = inertJson(value, 2).value;
      assert.deepEqual(JSON.parse(indented), value);
      assert.ok(indented.includes('\n  "text"'), 'indentation is kept');
    });
  });
});
