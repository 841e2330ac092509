import assert from 'node:assert/strict';
import { JSDOM } from 'jsdom';
import { createMarkdownRenderer, MarkdownStream, type MarkdownRenderer } from '../../../client/src/webview/markdown';

const { window } = new JSDOM('');
const renderer = createMarkdownRenderer(window, { repoRoot: '/work/repo' });

/** The rendered HTML as a DOM, the way the panel inserts it. */
function parse(html: string): Element {
  const container = window.document.createElement('div');
  container.innerHTML = html;
  return container;
}

const FORBIDDEN_ELEMENTS = 'script, iframe, frame, object, embed, svg, math, style, link, meta, base, form, input, textarea, select, img, video, audio, source, picture, template';

/** Every way the output could run code, load something or navigate; empty when inert. */
function dangersIn(html: string): string[] {
  const root = parse(html);
  const found: string[] = [];
  for (const el of Array.from(root.querySelectorAll(FORBIDDEN_ELEMENTS))) found.push(`<${el.tagName.toLowerCase()}>`);
  for (const el of Array.from(root.querySelectorAll('*'))) {
    for (const attr of Array.from(el.attributes)) {
      const name = attr.name.toLowerCase();
      if (name.startsWith('on')) found.push(`${name} on <${el.tagName.toLowerCase()}>`);
      if (name === 'style' || name === 'srcset' || name === 'src' || name === 'action' || name === 'formaction' || name === 'xlink:href') {
        found.push(`${name}="${attr.value}"`);
      }
      if (name === 'href' && !/^(?:https?:\/\/|#)/i.test(attr.value)) found.push(`href="${attr.value}"`);
    }
  }
  return found;
}

const HOSTILE_OUTPUTS: Array<[string, string]> = [
  ['a script element', '<script>alert(1)</script>'],
  ['an image with onerror', '<img src=x onerror="alert(1)">'],
  ['a raw javascript: anchor', '<a href="javascript:alert(1)">click</a>'],
  ['a Markdown javascript: link', '[x](javascript:alert(1))'],
  ['an svg with onload', '<svg onload="alert(1)"><circle r="1"/></svg>'],
  ['an iframe', '<iframe src="https://evil.example"></iframe>'],
  ['an object', '<object data="https://evil.example/x.swf"></object>'],
  ['an embed', '<embed src="https://evil.example/x">'],
  ['a form', '<form action="https://evil.example"><input name="q"><button>go</button></form>'],
  ['a style element importing a remote sheet', '<style>@import url(http://evil.example/x.css);</style>'],
  ['a style attribute loading a remote image', '<div style="background:url(http://evil.example/x.png)">x</div>'],
  ['a meta refresh', '<meta http-equiv="refresh" content="0;url=https://evil.example">'],
  ['a base element', '<base href="https://evil.example/">'],
  ['a data: link', '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)'],
  ['a data: image', '![x](data:image/png;base64,iVBORw0KGgo=)'],
  ['a mixed-case JaVaScRiPt: link', '[x](JaVaScRiPt:alert(1))'],
  ['an entity-encoded javascript&#58; link', '[x](javascript&#58;alert(1))'],
  ['an entity-encoded raw anchor', '<a href="javascript&#58;alert(1)">x</a>'],
  ['a javascript: link with a tab in the scheme', '[x](java\tscript:alert(1))'],
  ['a vbscript: link', '[x](vbscript:msgbox(1))'],
  ['a command: link', '[run](command:workbench.action.terminal.new)'],
  ['a file: link', '[x](file:///etc/passwd)'],
  ['a protocol-relative link', '[x](//evil.example/x)'],
  ['a javascript: autolink', '<javascript:alert(1)>'],
  ['a remote image', '![tracker](https://evil.example/pixel.png)'],
  ['a reference-style javascript: link', '[x][1]\n\n[1]: javascript:alert(1)'],
  ['a link title breaking out of its attribute', '[x](https://ok.example "a\\" onmouseover=\\"alert(1)")'],
  ['a fenced code block with an info string attack', '```"><script>alert(1)</script>\ncode\n```'],
  ['an html comment hiding a script', '<!-- --><script>alert(1)</script>'],
  ['a details element with ontoggle', '<details open ontoggle="alert(1)"><summary>x</summary></details>'],
];

describe('rendering model Markdown', () => {
  describe('hostile output renders inert', () => {
    for (const [name, markdown] of HOSTILE_OUTPUTS) {
      it(`neutralizes ${name}`, () => {
        assert.deepEqual(dangersIn(renderer.render(markdown)), []);
      });
    }

    for (const [name, markdown] of HOSTILE_OUTPUTS) {
      it(`neutralizes ${name} even when it reaches the sanitizer as raw HTML`, () => {
        assert.deepEqual(dangersIn(renderer.sanitize(markdown)), []);
      });
    }

    it('leaves no dangerous scheme anywhere in the output of the whole hostile list at once', () => {
      const html = renderer.render(HOSTILE_OUTPUTS.map(([, markdown]) => markdown).join('\n\n'));
      assert.deepEqual(dangersIn(html), []);
      for (const el of Array.from(parse(html).querySelectorAll('[href]'))) {
        assert.doesNotMatch(el.getAttribute('href') ?? '', /^\s*(?:javascript|vbscript|data|command|file):/i);
      }
    });

    it('shows raw HTML from the model as text rather than dropping it', () => {
      const root = parse(renderer.render('Use <script>alert(1)</script> carefully'));
      assert.equal(root.textContent?.trim(), 'Use <script>alert(1)</script> carefully');
    });
  });

  describe('links', () => {
    it('keeps http(s) links, marked external, with the real target as their title', () => {
      const link = parse(renderer.render('[the docs](https://example.com/docs)')).querySelector('a')!;
      assert.equal(link.getAttribute('href'), 'https://example.com/docs');
      assert.equal(link.getAttribute('class'), 'external-link');
      assert.equal(link.getAttribute('title'), 'https://example.com/docs');
    });

    it('links bare http URLs but not file names that happen to end in a country domain', () => {
      const root = parse(renderer.render('See https://example.com/x and README.md and setup.py'));
      assert.deepEqual(Array.from(root.querySelectorAll('a'), (a) => a.getAttribute('href')), ['https://example.com/x']);
    });

    it('turns cited repository paths into inert path links carrying the path and line', () => {
      const root = parse(renderer.render('Look at src/app.ts:42, `lib/util.py#L3-L9` and [the handler](./server/handler.go:7).'));
      const links = Array.from(root.querySelectorAll('a.path-link'), (a) => ({
        href: a.getAttribute('href'),
        path: a.getAttribute('data-path'),
        line: a.getAttribute('data-line'),
        endLine: a.getAttribute('data-end-line'),
      }));
      assert.deepEqual(links, [
        { href: '#', path: 'src/app.ts', line: '42', endLine: null },
        { href: '#', path: 'lib/util.py', line: '3', endLine: '9' },
        { href: '#', path: 'server/handler.go', line: '7', endLine: null },
      ]);
    });

    it('makes absolute paths inside the repository relative and leaves others as text', () => {
      const root = parse(renderer.render('[in](/work/repo/src/a.ts:3) and [out](/etc/passwd) and [up](../secret.ts)'));
      assert.deepEqual(Array.from(root.querySelectorAll('a'), (a) => a.getAttribute('data-path')), ['src/a.ts']);
      assert.match(root.textContent ?? '', /\[out\]\(\/etc\/passwd\)/);
    });

    it('does not nest a path link inside another link', () => {
      const root = parse(renderer.render('[see src/a.ts](https://example.com/src/a.ts)'));
      assert.equal(root.querySelectorAll('a').length, 1);
      assert.equal(root.querySelector('a a'), null);
    });

    it('keeps the text of a link to something that is neither a URL nor a repository path', () => {
      const root = parse(renderer.render('[a note](#section)'));
      assert.equal(root.querySelector('a')?.getAttribute('href'), '#section');
    });
  });

  describe('code', () => {
    it('highlights fenced code and gives it Copy and Insert buttons driven by data attributes', () => {
      const root = parse(renderer.render('```ts\nconst answer: number = 42;\n```'));
      const block = root.querySelector('.code-block')!;
      assert.ok(block.querySelector('code.hljs.language-ts .hljs-keyword'));
      const actions = Array.from(block.querySelectorAll('button'), (b) => [b.getAttribute('data-code-action'), b.getAttribute('type'), b.getAttribute('aria-label')]);
      assert.deepEqual(actions, [
        ['copy', 'button', 'Copy code'],
        ['insert', 'button', 'Insert code at the cursor'],
      ]);
      assert.equal(block.querySelector('pre code')?.textContent, 'const answer: number = 42;\n');
    });

    it('escapes code in a language it does not know', () => {
      const root = parse(renderer.render('```nosuchlang\n<b>not bold</b>\n```'));
      assert.equal(root.querySelector('b'), null);
      assert.equal(root.querySelector('pre code')?.textContent, '<b>not bold</b>\n');
    });

    it('aligns table cells with classes, since style attributes are not allowed', () => {
      const root = parse(renderer.render('| a | b |\n|:--|--:|\n| 1 | 2 |'));
      assert.deepEqual(Array.from(root.querySelectorAll('td'), (td) => td.getAttribute('class')), ['align-left', 'align-right']);
      assert.equal(root.querySelector('[style]'), null);
    });
  });

  describe('streaming', function () {
    // Hundreds of renders through jsdom's DOMPurify: slow in Node, not in the webview.
    this.timeout(20_000);

    const REPLY = [
      '# Plan',
      '',
      'The change touches src/server.ts:10 and `client/src/extension.ts`.',
      '',
      '- first item',
      '',
      '- second item, loose',
      '  continued',
      '',
      '  still in the item',
      '',
      '1. one',
      '2. two',
      '',
      '3. three, after a blank line',
      '',
      'Some text with a [link](https://example.com).',
      '',
      '```ts',
      'function f() {',
      '',
      '  return 1;',
      '}',
      '```',
      '',
      '    indented code',
      '',
      '    more indented code',
      '',
      '> a quote',
      '',
      '> another quote',
      '',
      '| a | b |',
      '|:--|--:|',
      '| 1 | 2 |',
      '',
      '* star',
      '+ plus',
      '',
      '---',
      '',
      '~~~',
      'tilde fence',
      '',
      '```',
      'still inside',
      '~~~',
      '',
      'Done.',
    ].join('\n');

    function streamInChunks(text: string, chunkSizes: (index: number) => number, stream = new MarkdownStream(renderer)): { html: string; stream: MarkdownStream } {
      let frozen = '';
      let tail = '';
      for (let offset = 0, i = 0; offset < text.length; i++) {
        const size = Math.max(1, chunkSizes(i));
        const update = stream.append(text.slice(offset, offset + size));
        if (update.reset) frozen = '';
        frozen += update.frozenHtml;
        tail = update.tailHtml;
        offset += size;
      }
      return { html: frozen + tail, stream };
    }

    it('renders the same final HTML as a one-shot render, for a range of fixed chunk sizes', () => {
      const expected = renderer.render(REPLY);
      for (const size of [1, 2, 3, 5, 8, 13, 40]) {
        assert.equal(streamInChunks(REPLY, () => size).html, expected, `chunk size ${size}`);
      }
    });

    it('renders the same final HTML as a one-shot render, for random chunkings of varied replies', () => {
      const pieces = REPLY.split('\n\n');
      let seed = 7;
      const random = () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed / 2 ** 31;
      };
      for (let round = 0; round < 25; round++) {
        const count = 1 + Math.floor(random() * pieces.length);
        const text = Array.from({ length: count }, () => pieces[Math.floor(random() * pieces.length)]).join(random() < 0.5 ? '\n\n' : '\n');
        const { html } = streamInChunks(text, () => 1 + Math.floor(random() * 12));
        assert.equal(html, renderer.render(text), `round ${round}:\n${text}`);
      }
    });

    it('still matches a one-shot render when a reference definition arrives after its use', () => {
      const text = 'Intro with [a ref][r].\n\nMore text.\n\n[r]: https://example.com/ref';
      assert.equal(streamInChunks(text, () => 3).html, renderer.render(text));
      assert.equal(streamInChunks(text + '\n', () => 5).html, renderer.render(text + '\n'));
    });

    it('re-renders only the open block on each delta, not the whole reply', () => {
      const rendered: number[] = [];
      const counting: MarkdownRenderer = {
        ...renderer,
        render: (markdown) => {
          rendered.push(markdown.length);
          return renderer.render(markdown);
        },
      };
      const paragraph = 'A sentence of a long reply that keeps going for a while.';
      const text = Array.from({ length: 200 }, (_, i) => `${paragraph} (${i})`).join('\n\n');
      const { html } = streamInChunks(text, () => 7, new MarkdownStream(counting));
      assert.equal(html, renderer.render(text));
      // Never more than the block being written plus the one just finished.
      assert.ok(Math.max(...rendered) < 3 * (paragraph.length + 10), `largest render was ${Math.max(...rendered)} characters`);
    });

    it('starts over cleanly when replaced by a final message that differs from the deltas', () => {
      const stream = new MarkdownStream(renderer);
      stream.append('Partial **bold');
      const update = stream.replace('Final text.\n\nSecond paragraph.');
      assert.equal(update.reset, true);
      assert.equal(update.frozenHtml + update.tailHtml, renderer.render('Final text.\n\nSecond paragraph.'));
      assert.equal(stream.source, 'Final text.\n\nSecond paragraph.');
    });
  });

  it('refuses to run without a DOM to sanitize with, rather than pass HTML through unsanitized', () => {
    assert.throws(() => createMarkdownRenderer({} as unknown as typeof window), /DOMPurify/);
  });
});
