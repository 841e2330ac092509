import * as fs from 'node:fs';
import * as path from 'node:path';
import { prng } from '../support/prng';

/**
 * A synthetic repository for the benchmark: a monorepo-shaped tree of
 * TypeScript-like sources, tests, docs and JSON, plus ignored build output and
 * node_modules/ that a search must skip. The same seed gives the same tree,
 * so runs on different machines search the same bytes.
 */

export interface GeneratedRepo {
  root: string;
  /** Files a search visits (not ignored, not in node_modules/). */
  files: number;
  /** A literal that appears in a few dozen files, so every search reads the whole tree. */
  literal: string;
  literalMatches: number;
  /** A regular expression with about a hundred matching lines. */
  regex: string;
  regexMatches: number;
  /** A name glob matching a few hundred files. */
  glob: string;
  globMatches: number;
}


const WORDS = [
  'value', 'result', 'config', 'handler', 'request', 'response', 'buffer', 'stream', 'index', 'count', 'item', 'node',
  'parent', 'child', 'event', 'state', 'cache', 'token', 'error', 'options', 'session', 'record', 'widget', 'layout',
];
const AREAS = ['core', 'api', 'ui', 'data', 'util', 'net', 'auth', 'jobs'];

function capitalize(word: string): string {
  return word[0].toUpperCase() + word.slice(1);
}

function sourceFile(next: () => number, index: number, withLiteral: boolean, withRegex: boolean): string {
  const pick = (): string => WORDS[Math.floor(next() * WORDS.length)];
  const lines = [`// Module ${index}: ${pick()} ${pick()} ${pick()}`, `import { ${pick()}, ${pick()} } from '../${pick()}';`, ''];
  const count = 40 + Math.floor(next() * 80);
  for (let i = 0; i < count; i++) {
    const roll = next();
    if (roll < 0.08) lines.push(`export function ${pick()}${capitalize(pick())}(${pick()}: string, ${pick()}: number): boolean {`);
    else if (roll < 0.16) lines.push('}');
    else if (roll < 0.22) lines.push(`  // ${pick()} the ${pick()} before the ${pick()} is ${pick()}ed`);
    else lines.push(`  const ${pick()}${index % 100} = ${pick()}.${pick()}(${Math.floor(next() * 1000)}, '${pick()}');`);
  }
  if (withLiteral) lines.splice(5, 0, `  const widget = resolveWidgetConfig(options, ${index});`);
  if (withRegex) lines.splice(8, 0, `export function handle${capitalize(WORDS[index % WORDS.length])}Event(event: Event): void {`);
  return `${lines.join('\n')}\n`;
}

function tinyFile(index: number): string {
  return `export const value${index} = ${index};\n`;
}

/**
 * Writes `fileCount` searchable files under `root` (plus ignored ones).
 * `tiny` files hold one line: enough for the summary benchmarks, which only
 * list names, and quick to write a hundred thousand of.
 */
export function generateRepo(root: string, fileCount: number, options: { tiny?: boolean } = {}): GeneratedRepo {
  const next = prng(0x5eed);
  fs.mkdirSync(root, { recursive: true });
  const write = (relative: string, text: string): void => {
    const target = path.join(root, relative);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, text);
  };
  write('.gitignore', 'dist/\n*.log\ncoverage/\n');
  write('package.json', '{ "name": "bench-monorepo", "private": true, "workspaces": ["packages/*"] }\n');
  write('README.md', '# Bench monorepo\n\nGenerated for `npm run bench`.\n');

  let literalMatches = 0;
  let regexMatches = 0;
  let globMatches = 0;
  let written = 3;
  const filesPerDirectory = 20;
  for (let index = 0; written < fileCount; index++) {
    const pkg = Math.floor(index / (filesPerDirectory * AREAS.length * 5));
    const area = AREAS[Math.floor(index / (filesPerDirectory * 5)) % AREAS.length];
    const module = Math.floor(index / filesPerDirectory) % 5;
    const directory = `packages/pkg-${String(pkg).padStart(3, '0')}/src/${area}/mod${module}`;
    const slot = index % filesPerDirectory;
    const kind = slot === 0 ? 'md' : slot === 1 ? 'json' : slot < 4 ? 'test' : 'ts';
    const name = kind === 'md' ? 'README.md' : kind === 'json' ? 'fixture.json' : kind === 'test' ? `case${slot}.test.ts` : `${WORDS[slot]}${index}.ts`;
    let text: string;
    if (options.tiny) {
      text = tinyFile(index);
    } else if (kind === 'md') {
      text = `# ${directory}\n\nNotes on the ${area} area.\n`;
    } else if (kind === 'json') {
      text = `${JSON.stringify({ id: index, area, items: [index, index * 2, index * 3] }, null, 2)}\n`;
    } else {
      const withLiteral = index % 250 === 7;
      const withRegex = index % 211 === 3;
      if (withLiteral) literalMatches += 1;
      if (withRegex) regexMatches += 1;
      text = sourceFile(next, index, withLiteral, withRegex);
    }
    if (kind === 'test') globMatches += 1;
    write(`${directory}/${name}`, text);
    written += 1;
  }
  // Ignored output and dependencies: present, never searched.
  const skipped = Math.min(2000, Math.floor(fileCount / 10));
  for (let i = 0; i < skipped; i++) {
    write(`dist/chunk${Math.floor(i / 50)}/out${i}.js`, options.tiny ? tinyFile(i) : `resolveWidgetConfig(${i});\n`);
    write(`node_modules/dep${Math.floor(i / 50)}/index${i}.js`, options.tiny ? tinyFile(i) : `resolveWidgetConfig(${i});\n`);
  }
  return {
    root,
    files: written,
    literal: 'resolveWidgetConfig',
    literalMatches,
    regex: 'function\\s+handle[A-Z]\\w*Event\\(',
    regexMatches,
    glob: '*.test.ts',
    globMatches,
  };
}
