import assert from 'node:assert/strict';
import { findRepoPaths, formatRepoPath, parseCitedPath, parseRepoPath } from '../../../client/src/webview/links';

const ROOT = { repoRoot: '/work/repo' };

describe('repository path citations', () => {
  describe('reading one reference', () => {
    const accepted: Array<[string, ReturnType<typeof parseRepoPath>]> = [
      ['src/a.ts', { path: 'src/a.ts' }],
      ['src/a.ts:42', { path: 'src/a.ts', line: 42 }],
      ['src/a.ts#L42', { path: 'src/a.ts', line: 42 }],
      ['src/a.ts#L42-L50', { path: 'src/a.ts', line: 42, endLine: 50 }],
      ['src/a.ts#L42-50', { path: 'src/a.ts', line: 42, endLine: 50 }],
      ['src/a.ts:42-50', { path: 'src/a.ts', line: 42, endLine: 50 }],
      ['./x/y.py:3:5', { path: 'x/y.py', line: 3 }],
      ['a.ts:7', { path: 'a.ts', line: 7 }],
      ['docs/guide', { path: 'docs/guide' }],
      ['src/./lib/../a.ts', { path: 'src/a.ts' }],
      ['src\\win\\path.cs:9', { path: 'src/win/path.cs', line: 9 }],
      ['/work/repo/src/a.ts:3', { path: 'src/a.ts', line: 3 }],
    ];
    for (const [text, expected] of accepted) {
      it(`reads ${JSON.stringify(text)} as ${formatRepoPath(expected!)}`, () => {
        assert.deepEqual(parseRepoPath(text, ROOT), expected);
      });
    }

    const rejected: Array<[string, string]> = [
      ['/etc/passwd', 'an absolute path outside the repository'],
      ['/work/repository-other/a.ts', 'an absolute path that only shares a prefix with the root'],
      ['C:/Windows/system.ini', 'a Windows path outside the repository'],
      ['../secret.ts', 'a climb out of the folder'],
      ['src/../../secret.ts', 'a climb out hidden behind a folder'],
      ['https://example.com/src/a.ts', 'an http URL'],
      ['javascript:alert(1)', 'a javascript: URL'],
      ['command:workbench.action.terminal.new', 'a command: URI'],
      ['vscode://file/etc/passwd', 'a vscode: URI'],
      ['//evil.example/a.ts', 'a protocol-relative URL'],
      ['.', 'the folder itself'],
      ['', 'nothing'],
      ['src/a\u0000.ts', 'a path with a control character'],
    ];
    for (const [text, why] of rejected) {
      it(`rejects ${why}`, () => {
        assert.equal(parseRepoPath(text, ROOT), undefined);
      });
    }

    it('rejects absolute paths when the repository root is unknown', () => {
      assert.equal(parseRepoPath('/work/repo/src/a.ts'), undefined);
    });

    it('drops an end line before the start line', () => {
      assert.deepEqual(parseRepoPath('src/a.ts:50-42'), { path: 'src/a.ts', line: 50 });
    });
  });

  describe('inline code', () => {
    it('takes a whole code span that names a file as a citation', () => {
      assert.deepEqual(parseCitedPath('package.json'), { path: 'package.json' });
      assert.deepEqual(parseCitedPath('src/app.ts:12'), { path: 'src/app.ts', line: 12 });
      assert.deepEqual(parseCitedPath('.github/workflows/ci.yml'), { path: '.github/workflows/ci.yml' });
      assert.deepEqual(parseCitedPath('Makefile'), { path: 'Makefile' });
      assert.deepEqual(parseCitedPath('.gitignore'), { path: '.gitignore' });
    });

    it('leaves code that is not a file name alone', () => {
      for (const code of ['console.log', 'obj.method', 'npm test', 'a/b', '.then', 'foo()', 'x => x.y', '1.2.3', 'process.env.HOME', 'https://example.com/a.ts']) {
        assert.equal(parseCitedPath(code), undefined, code);
      }
    });
  });

  describe('running text', () => {
    it('finds each cited path with its offsets and line', () => {
      const text = 'The entry is src/main.ts:10, helpers live in ./lib/util.py#L3-L9, config in config/app.yaml.';
      const found = findRepoPaths(text);
      assert.deepEqual(
        found.map(({ path, line, endLine, start, end }) => ({ path, line, endLine, cited: text.slice(start, end) })),
        [
          { path: 'src/main.ts', line: 10, endLine: undefined, cited: 'src/main.ts:10' },
          { path: 'lib/util.py', line: 3, endLine: 9, cited: './lib/util.py#L3-L9' },
          { path: 'config/app.yaml', line: undefined, endLine: undefined, cited: 'config/app.yaml' },
        ],
      );
    });

    it('takes a bare file name only with a line number, since prose is full of dotted words', () => {
      assert.deepEqual(findRepoPaths('see index.js:4 for it').map((m) => m.path), ['index.js']);
      assert.deepEqual(findRepoPaths('Node.js and Vue.js, e.g. this, i.e. that'), []);
    });

    it('ignores URLs, ratios, versions, times and hosts', () => {
      const prose = [
        'Read https://github.com/org/repo/blob/main/src/a.ts for details.',
        'Use and/or TCP/IP at 1/2 speed, version 1.2/3.4, at 12:30.',
        'Served from localhost:8080 and example.com:443 or www.example.com/a/b.html.',
        'Protocol-relative //cdn.example.com/lib.js too.',
      ].join(' ');
      assert.deepEqual(findRepoPaths(prose), []);
    });

    it('skips absolute paths outside the repository and climbs out of it', () => {
      assert.deepEqual(findRepoPaths('Not /etc/hosts.conf nor ../outside/x.ts nor C:/Windows/x.ini', ROOT), []);
      assert.deepEqual(findRepoPaths('But /work/repo/src/in.ts:2 is fine', ROOT).map((m) => [m.path, m.line]), [['src/in.ts', 2]]);
    });

    it('stops before sentence punctuation', () => {
      const text = 'Look at src/a.ts. Then (src/b.ts), and "src/c.ts"!';
      assert.deepEqual(findRepoPaths(text).map((m) => text.slice(m.start, m.end)), ['src/a.ts', 'src/b.ts', 'src/c.ts']);
    });
  });
  describe('titles', () => {
    it('show a linked path holding a bidi or control character quoted and escaped, so the title says where the link goes', () => {
      assert.equal(formatRepoPath({ path: 'src/gnp.\u202ets', line: 3 }), '"src/gnp.\\u202ets":3');
      assert.equal(formatRepoPath({ path: 'src/a\u0085b.ts' }), '"src/a\\u0085b.ts"');
      assert.equal(formatRepoPath({ path: 'src/a.ts', line: 3, endLine: 9 }), 'src/a.ts:3-9');
    });
  });
});
