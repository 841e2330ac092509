/**
 * The symbol index's size limits, in a module of their own so the server's
 * main bundle can name them without pulling in the tree-sitter runtime.
 */
export const INDEX_LIMITS = Object.freeze({
  /** Bigger files are not parsed (generated bundles, data). */
  maxFileBytes: 1024 * 1024,
  /** Files beyond this many are not indexed; the answer says the index is incomplete. */
  maxFiles: 50_000,
  /** A walk stops after this many directory entries. */
  walkMaxEntries: 1_000_000,
  /** Per file: later syntax errors are counted, not listed. */
  maxProblemsPerFile: 20,
  maxLineChars: 200,
  /** Per file: a generated file with more definitions keeps the first ones (bounds the index's memory). */
  maxSymbolsPerFile: 5000,
  /**
   * Per file: distinct identifiers kept, for the repository map and for
   * choosing (and answering) reference searches (bounds the index's memory on
   * generated files; a file at the cap is searched for every name).
   */
  maxReferenceNamesPerFile: 2000,
  /** Longer identifiers are not listed (a reference search for one reads every file). */
  maxReferenceNameChars: 100,
});
