import * as assert from 'node:assert/strict';
import { Lexicon, offsetsInCode } from '../../../server/src/symbols/codeWords';
import { wholeWordPattern } from '../../../server/src/symbols/wholeWords';

/**
 * The scan that lets the reference search skip a parse must place a word in
 * code or out of it as the parser would, and must say it cannot tell rather
 * than guess wherever the language has a form it does not model.
 */
describe('telling code from comments and strings without a parse', () => {
  /** The lines (1-based) of the whole-word matches of `word` that the scan puts in code; undefined when it cannot tell. */
  function linesInCode(text: string, word: string, lexicon: Lexicon): number[] | undefined {
    const offsets = [...text.matchAll(wholeWordPattern(word))].map((match) => match.index);
    const inCode = offsetsInCode(text, offsets, lexicon);
    return inCode?.map((offset) => text.slice(0, offset).split('\n').length);
  }

  const lines = (...source: string[]): string => `${source.join('\n')}\n`;

  it('reads a quote right after a keyword, as minified JavaScript writes one, as a string', () => {
    assert.deepEqual(linesInCode(lines('import{a as options}from"options";x=options?"options":1;'), 'options', 'javascript'), [1, 1]);
  });

  it('leaves out line and block comments and both kinds of quoted strings in JavaScript', () => {
    const text = lines(
      '// options come first',
      'const a = options; /* options */ const b = "options";',
      "const c = 'options' + options;",
      '/* options',
      '   options */ use(options);',
    );
    assert.deepEqual(linesInCode(text, 'options', 'javascript'), [2, 3, 5]);
  });

  it('does not end a string at an escaped quote', () => {
    assert.deepEqual(linesInCode(lines('const a = "say \\" options"; f(options);'), 'options', 'javascript'), [1]);
    assert.deepEqual(linesInCode(lines("const a = 'it\\'s options'; f(options);"), 'options', 'javascript'), [1]);
  });

  it('puts the expressions of a template literal in code, however deeply nested, and its text out of it', () => {
    const text = lines(
      'const a = `options ${options} and ${ { x: options }.x } end`;',
      'const b = `outer ${`inner ${options} options`} options`;',
      'const c = `multi',
      'line options`;',
      'f(options);',
    );
    assert.deepEqual(linesInCode(text, 'options', 'javascript'), [1, 1, 2, 5]);
  });

  it('reads a slash after an operand as a division and elsewhere as a regular expression', () => {
    const text = lines(
      'const half = options / 2 / options;',
      "const re = /options[/']/g.test(options);",
      'return /options/.exec(x);',
    );
    assert.deepEqual(linesInCode(text, 'options', 'javascript'), [1, 1, 2]);
    assert.deepEqual(linesInCode(lines('const g = /x/g.test(s) || /y/gi;', 'f(g);'), 'g', 'javascript'), [1, 2], "a regular expression's flags are its own");
  });

  it('reads what comes before a slash past the comments between', () => {
    assert.deepEqual(linesInCode(lines('x = // the pattern', '  /options/.test(options);'), 'options', 'javascript'), [2]);
    assert.deepEqual(linesInCode(lines('x = a /* half */ / options;'), 'options', 'javascript'), [1]);
  });

  it('cannot tell a slash after a closing brace or an increment, and says so', () => {
    assert.equal(linesInCode(lines('if (x) {} /options/.test(options);'), 'options', 'javascript'), undefined);
    assert.equal(linesInCode(lines('i++ / options;'), 'options', 'javascript'), undefined);
  });

  it("tells what a ) closes: after a condition a statement starts, after a call or a parenthesized expression an operand has ended", () => {
    assert.deepEqual(linesInCode(lines('if (x) /`/.test(options);', '// ` options'), 'options', 'javascript'), [1], 'a regular expression after a condition');
    assert.deepEqual(linesInCode(lines('for (const k in o) /* c */ /`/.test(options);', '// ` options'), 'options', 'javascript'), [1]);
    assert.deepEqual(linesInCode(lines('const half = (a + b) / 2 / options;', 'f(x) / options;'), 'options', 'javascript'), [1, 2], 'a division after an operand');
    assert.deepEqual(linesInCode(lines('if (options)', '  <p>', '    options', '  </p>;', 'x = (a) < options;'), 'options', 'tsx'), [1, 5]);
    const passed = lines("const w = t(')') / 4 / options;", 'if (/\\)/.test(s)) /`/.test(options);', '// ` options', 'if (x // (', ') /`/.test(options);', '// ` options');
    assert.deepEqual(linesInCode(passed, 'options', 'javascript'), [1, 2, 5], 'parentheses in strings, regular expressions and comments do not count');
    const farBack = `x = (${'a + '.repeat(60)}b) / options;`;
    assert.equal(linesInCode(lines(farBack), 'options', 'javascript'), undefined, 'a ( too far back to look for');
  });

  it('leaves to the parser a slash or a < that the mark before it does not tell', () => {
    const tail = ' / 2 + "/"; options; "options"; // "';
    const unsure: Array<[string, Lexicon]> = [
      [`const r = a!${tail}`, 'typescript'], // a non-null assertion ends an operand
      [`const r = x as Array<number>${tail}`, 'typescript'], // type arguments end in >
      [`x = 1.${tail}`, 'javascript'], // a number ending in a dot
      [`x = cafe\u0301${tail}`, 'javascript'], // a name with a mark the word rule does not know
      [`do x(); while (a)${tail}`, 'javascript'], // the parser divides after a do-while's condition
      [`for await (const x of y)${tail}`, 'javascript'],
      ['let x\n/"/.test(c) ? options : "options"; // "', 'javascript'], // a line break may end the statement
      ['interface I {\n  <T>(options: T): T; // </T> options\n}', 'tsx'], // a call signature's type parameters
      ['type C = {\n  new <T>(options: T): C; // </T> options\n}', 'tsx'], // a construct signature's
      ['type M = {\n  m?<T>(options: T): T; // </T> options\n}', 'tsx'], // an optional method's
      ['type L = { a: string, <T>(options: T): T; // </T> options\n}', 'tsx'], // after another member
    ];
    for (const [source, lexicon] of unsure) assert.equal(linesInCode(lines(source), 'options', lexicon), undefined, source);
    // Read as a condition, `/ 2 /options` would be a regular expression with flags, and `options` no word of the code.
    assert.deepEqual(linesInCode(lines('a. if (b) / 2 /options;'), 'options', 'javascript'), [1], 'a property named if is called, not a condition');
    const privateName = lines('class A {', '  #if(x) { return x }', '  m(b) { return this.#if(b) / 2 /options;', '  }', '}');
    assert.deepEqual(linesInCode(privateName, 'options', 'javascript'), [3], 'nor a private name');
  });

  it('reads what follows an element as what follows an operand', () => {
    assert.deepEqual(linesInCode(lines('x = <a/> /* c */ / 2 /options;'), 'options', 'javascript'), [1], 'a division, not a regular expression');
    assert.deepEqual(linesInCode(lines('z = <x/> < options; f(options);'), 'options', 'javascript'), [1, 1], 'a comparison, not an element');
  });

  it('cannot tell a slash or a < after a word that is a keyword only in places, and says so', () => {
    for (const word of ['of', 'yield', 'await']) {
      assert.equal(linesInCode(lines(`let ${word} = 2;`, `x = ${word} /* c */ / 2 / options;`), 'options', 'javascript'), undefined, word);
      assert.equal(linesInCode(lines(`x = ${word} < options; <p/>;`), 'options', 'javascript'), undefined, word);
    }
  });

  it("reads JSX: its tags' and attributes' names and its expressions are code, its text and attribute strings are not", () => {
    const text = lines(
      'const el = (',
      '  <Panel title="options" options={options} data-options="x" {...options}>',
      "    Don't pass options here, it's text {options.length}",
      '    <Item.Row key={options} />',
      '    <>{/* options */}{`options ${options}`}</>',
      '  </Panel>',
      ');',
      'const less = a < options && <options.Provider />;',
    );
    assert.deepEqual(linesInCode(text, 'options', 'javascript'), [2, 2, 2, 3, 4, 5, 8, 8]);
    const commented = lines('x = <B', '  // @ts-expect-error options', '  options={options} /* options */', '/>;');
    assert.deepEqual(linesInCode(commented, 'options', 'javascript'), [3, 3], 'comments between attributes');
    assert.deepEqual(linesInCode(lines('x = <svg><use xlink:my-ref="a" /></svg>;'), 'xlink', 'javascript'), [1], 'each part of a namespaced name');
    assert.deepEqual(linesInCode(lines('export default <p>options</p>; x / 2 / 3;', 'f(options);'), 'options', 'javascript'), [2]);
    assert.deepEqual(linesInCode(lines('for (; i++ < options;) {}', 'const el = <br/>;'), 'options', 'javascript'), [1], 'a comparison after an increment');
  });

  it('reads a < after a comment as what comes before the comment makes it', () => {
    const text = lines(
      'return (',
      '  // the options form',
      '  <Form options={options}>',
      '    options /* text, not a comment */',
      '  </Form>',
      ');',
      'x = /* options */ <p>{options}</p>;',
      'y = a /* options */ < options;',
      'z = /options/ < options; // a regular expression is an operand, not a comment',
    );
    assert.deepEqual(linesInCode(text, 'options', 'javascript'), [3, 3, 7, 8, 9]);
  });

  it("reads a tag's type arguments in a .tsx file as code, and leaves them to the parser where it reads none", () => {
    const text = lines('x = <List<Options> options={options} />;', 'y = <Table<Map<Key, Options[]>, Row | Options>>options</Table>;');
    assert.deepEqual(linesInCode(text, 'Options', 'tsx'), [1, 2, 2]);
    assert.deepEqual(linesInCode(text, 'options', 'tsx'), [1, 1]);
    assert.equal(linesInCode(text, 'options', 'javascript'), undefined, 'JavaScript has no type arguments');
    // After a hyphenated or namespaced name the parser reads the `<` as an error and the rest as text.
    assert.equal(linesInCode(lines('const d = <my-el<T> c={1}>c</my-el>;'), 'c', 'tsx'), undefined);
    assert.equal(linesInCode(lines('const d = <x:y<T> c={1}>c</x:y>;'), 'c', 'tsx'), undefined);
  });

  it("reads a generic arrow function's type parameters in a .tsx file as code, not as an element", () => {
    const text = lines('const f = <T extends Options>(options: T) => <p>{options}</p>;', 'const g = <T,>(options: T) => options;');
    assert.deepEqual(linesInCode(text, 'options', 'tsx'), [1, 1, 2, 2]);
    const defaulted = lines('const h = <T = Options>(options: T) => options;', 'const k = <const T,>(options: T) => <T>{options}</T>;');
    assert.deepEqual(linesInCode(defaulted, 'options', 'tsx'), [1, 1, 2, 2], 'a default, and const');
    const attributes = lines('const a = <Foo extends="x">options</Foo>; const r = n / 2;', 'const b = <Overextends>options</Overextends>; f(options);');
    assert.deepEqual(linesInCode(attributes, 'options', 'tsx'), [2], 'an attribute named extends, and a tag ending in it, are markup');
    assert.deepEqual(linesInCode(attributes, 'options', 'javascript'), [2]);
    // JavaScript's parser reads neither form: `a = <d = c>d</d>/2;` is no arrow there.
    assert.equal(linesInCode(text, 'options', 'javascript'), undefined);
    assert.equal(linesInCode(lines('a = <d = c>d</d>/2;', 'd();'), 'd', 'javascript'), undefined);
  });

  it('leaves to the parser the JSX forms it does not model, and markup that does not close', () => {
    const unsure = [
      'x = <List<{ options: Item }> />;', // type arguments with an object type
      'x = <a>options</b>;', // a closing tag naming another element
      'x = <p>a > options</p>;', // a `>` in text
      'x = <div /* options >text</div>;', // a comment in a tag that does not close
      'x = <p title="a\\"b" >options</p>;', // a backslash in an attribute's string
      'x = () => {}\n<p>options</p>;', // a `<` after a brace
      // A `<` after a block: taken for a comparison, the text would be code and the closing tag a regular expression.
      'if (ready) {}\n<p>\n  options\n</p>; x = a / options;',
      'x = <div>options <br/>', // never closed
    ];
    for (const source of unsure) assert.equal(linesInCode(lines(source, 'options()'), 'options', 'javascript'), undefined, source);
    assert.equal(linesInCode(lines('x = <div>options <br/>'), 'options', 'javascript'), undefined, 'an element open at the end of the text');
  });

  it('gives up on a hostile depth of nested JSX rather than recursing off its stack', () => {
    const deep = `x = ${'<a>{'.repeat(50_000)}\n</a>\noptions()\n`;
    assert.equal(linesInCode(deep, 'options', 'javascript'), undefined);
  });

  it('reads a .ts file, which cannot hold JSX, without looking for it: markup in its strings and comments, and a type assertion', () => {
    const text = lines(
      "const template = '<p>options</p>'; /** <br/> options */",
      'const html = `<input value="${options}" />`; f(<Options>options);',
    );
    assert.deepEqual(linesInCode(text, 'options', 'typescript'), [2, 2]);
    assert.equal(linesInCode(text, 'options', 'javascript'), undefined, 'in a .tsx or .js file `(<Options>` opens an element');
  });

  it('says it cannot tell when a string, a comment or a template is never closed', () => {
    assert.equal(linesInCode(lines('const a = "options;', 'f(options);'), 'options', 'javascript'), undefined);
    // A quote further down does not close it: a plain string ends with its line.
    assert.equal(linesInCode(lines('const a = "options;', 'f(options); // "'), 'options', 'javascript'), undefined);
    assert.equal(linesInCode(lines('f(options); /* options'), 'options', 'javascript'), undefined);
    assert.equal(linesInCode(lines('const a = `${options}', 'options();'), 'options', 'javascript'), undefined);
  });

  it('reads a hashbang line as a comment, in JavaScript and TypeScript', () => {
    assert.deepEqual(linesInCode(lines('#!/usr/bin/env options', 'run(options);'), 'options', 'javascript'), [2]);
    assert.deepEqual(linesInCode(lines('#!/usr/bin/env -S npx tsx options', 'run(options);'), 'options', 'typescript'), [2]);
    assert.deepEqual(linesInCode(lines('#!/usr/bin/env node', '/`/.test(options);', '// ` options'), 'options', 'javascript'), [2], 'what follows it starts a statement');
  });

  it('ends a JavaScript line comment at any of its line terminators', () => {
    for (const terminator of ['\r', '\u2028', '\u2029']) {
      assert.deepEqual(linesInCode(`// c${terminator}options = \`\noptions // \`\n`, 'options', 'javascript'), [1], JSON.stringify(terminator));
    }
  });

  it('reads Python comments, prefixed strings and triple-quoted strings', () => {
    const text = lines(
      '# options',
      'x = options  # options',
      'y = r"options\\" still" + b\'options\' + options',
      '"""options',
      'options"""',
      "z = f'plain options'",
    );
    assert.deepEqual(linesInCode(text, 'options', 'python'), [2, 3]);
    assert.equal(linesInCode(lines('x = q"options"', 'options()'), 'options', 'python'), undefined, 'no such prefix');
  });

  it("puts an f-string's fields in code, and its text, doubled braces, conversions and format specifications out of it", () => {
    const text = lines(
      'a = f"options {options} {{options}} {options!r} {x:options}"',
      "b = f'{d[\"options\"]} {x:>{options}} {x=}'",
      'c = F"""options {',
      '  options',
      '} options"""',
      'd = rf"\\d {options!s:>10} options"',
      'e = f"{ {1: options}[1] } {x!r:{options}}"',
    );
    assert.deepEqual(linesInCode(text, 'options', 'python'), [1, 1, 2, 4, 6, 7, 7]);
  });

  it("counts a string's prefix and an f-string's conversion as the string's, not as identifiers named like them", () => {
    const text = lines('f = f"{f!r}" + rb"f" + f', 'r = r"{r}"');
    assert.deepEqual(linesInCode(text, 'f', 'python'), [1, 1, 1]);
    assert.deepEqual(linesInCode(text, 'r', 'python'), [2]);
    assert.deepEqual(linesInCode(lines('let b = b"b" + b;'), 'b', 'rust'), [1, 1]);
    assert.deepEqual(linesInCode(lines('let y = b// b', 'let z = b/* b */;'), 'b', 'rust'), [1, 2], 'a b before a comment is no prefix');
  });

  it('leaves to the parser the f-strings Python 3.12 reads differently, and the ones that break the rules', () => {
    const unsure = [
      'f"{d["options"]}"', // the f-string's own quote in a field
      'f"{f\'{options}\'}"', // an f-string in a field
      'f"{options # no\n}"', // a comment in a field
      'f"\\N{BULLET} options"', // a named character, not a field
      'f"options}"', // a lone closing brace
      'f"{options:{x:{y}}}"', // nested deeper than the scan follows
      'f"{options',
    ];
    for (const source of unsure) assert.equal(linesInCode(lines(`x = ${source}`, 'options()'), 'options', 'python'), undefined, source);
  });

  it('gives up on a hostile depth of nested f-string fields rather than recursing off its stack', () => {
    const deep = `x = f"${'{x:'.repeat(100_000)}"\noptions()\n`;
    assert.equal(linesInCode(deep, 'options', 'python'), undefined);
  });

  it('reads Rust lifetimes as code and its characters as literals, nests its block comments, and leaves raw strings to the parser', () => {
    const text = lines(
      "fn pick<'options>(c: char) -> bool { c == 'o' || c == '\\'' || c == '\\u{6F}' }",
      '/* outer /* options */ options */ let options = b"options";',
      'let s = "multi',
      'line options";',
    );
    assert.deepEqual(linesInCode(text, 'options', 'rust'), [1, 2]);
    assert.equal(linesInCode(lines('let s = r#"options"#; options();'), 'options', 'rust'), undefined);
    assert.equal(linesInCode(lines('let s = r"options"; options();'), 'options', 'rust'), undefined);
  });

  it('reads Go runes and raw strings', () => {
    const text = lines('s := `options', 'options` + string(\'"\') + options // options');
    assert.deepEqual(linesInCode(text, 'options', 'go'), [2]);
  });

  it("reads C and C++'s encoding prefixes as their literals' own", () => {
    const text = lines('auto options = L"options" u8"options"; wchar_t c = L\'"\', d = u8\'o\';', 'u"options"; U"x"; options();');
    assert.deepEqual(linesInCode(text, 'options', 'c'), [1, 2]);
    assert.deepEqual(linesInCode(lines('auto L = L"x" + L;'), 'L', 'c'), [1, 1], 'the prefix is no identifier');
  });

  it('leaves C++ raw strings, digit separators, a name right before a quote, and line comments continued by a backslash, to the parser', () => {
    assert.deepEqual(linesInCode(lines("char q = '\"'; int options = 1; // options"), 'options', 'c'), [1]);
    assert.equal(linesInCode(lines('auto s = R"(options)"; options();'), 'options', 'c'), undefined);
    assert.equal(linesInCode(lines('auto s = LR"(options)"; options();'), 'options', 'c'), undefined);
    assert.equal(linesInCode(lines('printf("%" PRIu64"options", options);'), 'options', 'c'), undefined);
    assert.equal(linesInCode(lines("int n = 1'000; options();"), 'options', 'c'), undefined);
    assert.equal(linesInCode(lines('// note \\', 'options();'), 'options', 'c'), undefined);
  });

  it('leaves C# verbatim, interpolated and raw strings, and Java text blocks, to the parser', () => {
    assert.deepEqual(linesInCode(lines("var c = '\"'; var options = \"options\";"), 'options', 'csharp'), [1]);
    assert.equal(linesInCode(lines('var s = @"options"; options();'), 'options', 'csharp'), undefined);
    assert.equal(linesInCode(lines('var s = $"{options}"; options();'), 'options', 'csharp'), undefined);
    assert.equal(linesInCode(lines('String s = """', 'options""";', 'options();'), 'options', 'java'), undefined);
  });

  it('reads no further than the last match, so what comes after cannot make it give up', () => {
    assert.deepEqual(linesInCode(lines('f(options); // options', 'const s = "never closed'), 'options', 'javascript'), [1]);
  });
});
