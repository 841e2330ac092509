import type { FileIndex, IndexedSymbol } from '../../server/src/symbols/indexer';

/** An indexed file under `/r` that defines a function for each of `names` and uses each once, as the symbol thread would answer it. */
export function definingFile(relativePath: string, names: readonly string[], stamp = '1:1'): FileIndex {
  const symbols = names.map((name): IndexedSymbol => ({ name, kind: 'function', line: 1, startLine: 1, endLine: 1, text: `function ${name}() {}` }));
  const references = names.map((name) => `${name}\t1`).join('\n');
  return { relativePath, realPath: `/r/${relativePath}`, stamp, symbols, problems: [], moreProblems: 0, imports: [], reexports: [], references };
}
