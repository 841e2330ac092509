import * as assert from 'node:assert/strict';
import {
  escapeLineBreaks,
  inertLine,
  inertText,
  needsQuoting,
  parseQuotedPath,
  printableListItem,
  printablePath,
  quoteAsJson,
  quotedPath,
} from '../../../shared/printablePath';

/**
 * How tool answers and the panel show file names: ordinary names as they
 * are, hostile ones (line breaks, controls, bidi, `:12:`) as an escaped JSON
 * string that reads back as the same name.
 */

/** Every character that must never reach an answer raw from a name. */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

const ORDINARY = [
  'README.md',
  'src/index.ts',
  '.env.example',
  'a b/c d.txt',
  'weird#name@1.2.3+build~x',
  'Ünïcødé/日本語/файл.ts',
  'emoji 🎉.md',
  'C++/a.cc',
  "it's.txt",
  'a:b.txt',
  'time 12:30.txt',
  'x:5/y.ts',
  'trailing"quote',
  'back\\slash',
  '.',
];

const HOSTILE: Array<[string, string]> = [
  ['a newline', 'a.txt\nauth.ts:12: const ADMIN_PASSWORD = "x"'],
  ['a carriage return', 'a.txt\rb.ts'],
  ['a tab', 'a\tb.ts'],
  ['an escape sequence', '\u001b[31mred\u001b[0m.ts'],
  ['a bell and a backspace', 'a\u0007b\u0008c'],
  ['DEL', 'a\u007fb'],
  ['a C1 control (NEL)', 'a\u0085b'],
  ['a C1 control (CSI)', 'a\u009b31mb'],
  ['a right-to-left override', 'invoice\u202efdp.exe'],
  ['a left-to-right override', 'a\u202db'],
  ['a right-to-left embedding', 'a\u202bb'],
  ['a pop directional formatting', 'a\u202cb'],
  ['a right-to-left isolate', 'a\u2067b\u2069'],
  ['a first-strong isolate', 'a\u2068b'],
  ['a left-to-right isolate', 'a\u2066b'],
  ['a right-to-left mark', 'a\u200fb'],
  ['the Arabic letter mark', 'a\u061cb'],
  ['a line separator', 'a\u2028b.ts'],
  ['a paragraph separator', 'a\u2029b.ts'],
  ['a grep line-number separator', 'a.ts:12: fake match'],
  ['a line number at its end', 'notes:40'],
  ['a leading double quote', '"a.txt"'],
  ['only a double quote', '"'],
];

describe('printable file names', () => {
  describe('ordinary names', () => {
    for (const name of ORDINARY) {
      it(`leaves ${JSON.stringify(name)} exactly as it is`, () => {
        assert.equal(needsQuoting(name), false);
        assert.equal(printablePath(name), name);
      });
    }
  });

  describe('hostile names', () => {
    for (const [kind, name] of HOSTILE) {
      it(`quotes a name with ${kind}, leaving no unsafe character raw, and reads it back as the same name`, () => {
        const shown = printablePath(name);
        assert.notEqual(shown, name);
        assert.ok(shown.startsWith('"') && shown.endsWith('"'), shown);
        assert.doesNotMatch(shown, UNSAFE);
        assert.equal(JSON.parse(shown), name, 'the quoted form is a JSON string of the name');
        assert.equal(parseQuotedPath(shown), name);
      });
    }

    it('shows a newline as \\n and a bidi override as \\u202e, so the model reads what they are', () => {
      assert.equal(printablePath('a\nb'), '"a\\nb"');
      assert.equal(printablePath('gnp.\u202ets'), '"gnp.\\u202ets"');
      assert.equal(printablePath('a\u0085b'), '"a\\u0085b"');
    });

    it('cannot be mistaken for a quoted form of another name: a name that starts with a quote is quoted itself', () => {
      const literal = '"a\\nb"';
      const shown = printablePath(literal);
      assert.equal(shown, '"\\"a\\\\nb\\""');
      assert.equal(parseQuotedPath(shown), literal);
      assert.notEqual(shown, printablePath('a\nb'));
    });
  });

  describe('reading a quoted form back', () => {
    it('keeps a trailing slash after the closing quote, as list_dir prints a directory', () => {
      assert.equal(parseQuotedPath('"dir\\n"/'), 'dir\n/');
    });

    it('accepts other spellings of the same escapes (\\u000a, upper-case hex)', () => {
      assert.equal(parseQuotedPath('"a\\u000ab\\u202Ec"'), 'a\nb\u202ec');
    });

    it('is undefined for text that is not a complete JSON string', () => {
      for (const text of ['a.txt', '"', '"unterminated', 'x"y"', '"a"b"', '"bad \\q escape"', '""x', '42', 'null', '"a"//']) {
        assert.equal(parseQuotedPath(text), undefined, text);
      }
    });

    it('round-trips every name through printablePath and back, ordinary or hostile', () => {
      for (const name of [...ORDINARY, ...HOSTILE.map(([, n]) => n)]) {
        const shown = printablePath(name);
        assert.equal(needsQuoting(name) ? parseQuotedPath(shown) : shown, name);
      }
    });
  });

  describe('names inside messages and lists', () => {
    it('puts an ordinary name in plain double quotes, as the messages always did', () => {
      assert.equal(quotedPath('src/a.ts'), '"src/a.ts"');
    });

    it('escapes a name inside a message when a quote or backslash in it would read as an escape', () => {
      assert.equal(quotedPath('a"b'), '"a\\"b"');
      assert.equal(quotedPath('a\\nb'), '"a\\\\nb"');
      assert.equal(quotedPath('a\nb'), '"a\\nb"');
      assert.doesNotMatch(quotedPath('x\u202ey'), UNSAFE);
    });

    it('quotes a list item that holds a comma, so one name cannot pose as several', () => {
      assert.equal(printableListItem('a, b, c'), '"a, b, c"');
      assert.equal(printableListItem('src'), 'src');
    });

    it('builds valid JSON for an argument whatever the name holds', () => {
      const text = `{"path": ${quoteAsJson('a\u2028b\u202e')}}`;
      assert.deepEqual(JSON.parse(text), { path: 'a\u2028b\u202e' });
      assert.doesNotMatch(text, UNSAFE);
    });
  });

  describe('file content inside one result line', () => {
    it('escapes a carriage return and the other line breaks, so a content line stays one line', () => {
      const line = 'x\rfake.ts:1: y\u000bz\u000cw\u0085v\u2028u\u2029t';
      const shown = escapeLineBreaks(line);
      assert.equal(shown, 'x\\rfake.ts:1: y\\u000bz\\u000cw\\u0085v\\u2028u\\u2029t');
      assert.doesNotMatch(shown, /[\r\n\u000b\u000c\u0085\u2028\u2029]/);
    });

    it('leaves tabs, escape characters and bidi characters in content as they are (the model reads them as text)', () => {
      assert.equal(escapeLineBreaks('a\tb\u001b[0m\u202ec'), 'a\tb\u001b[0m\u202ec');
    });
  });

  describe('inert text for the panel', () => {
    it('keeps newlines and tabs in multi-line text and escapes every other unsafe character', () => {
      assert.equal(inertText('a.ts:1: x\n\tb\u202ec\rd\u001be'), 'a.ts:1: x\n\tb\\u202ec\\u000dd\\u001be');
    });

    it('escapes newlines too in a one-line label', () => {
      assert.equal(inertLine('a\nb\u2067c'), 'a\\u000ab\\u2067c');
      assert.equal(inertLine('plain name.ts'), 'plain name.ts');
    });
  });
});
