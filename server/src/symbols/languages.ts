import * as path from 'node:path';
import type { Lexicon } from './codeWords';

/**
 * The per-language tables of the symbol index: which grammar parses a file,
 * which syntax node types define a symbol (and of what kind), which enclose
 * others, and which leaf node types are identifiers. Node type names are
 * those of the grammars in @vscode/tree-sitter-wasm 0.3.1.
 */

export type SymbolKind =
  | 'class'
  | 'struct'
  | 'interface'
  | 'enum'
  | 'enum_member'
  | 'type'
  | 'function'
  | 'method'
  | 'constructor'
  | 'property'
  | 'variable'
  | 'constant'
  | 'module'
  | 'macro';

export const SYMBOL_KINDS: readonly SymbolKind[] = [
  'class', 'struct', 'interface', 'enum', 'enum_member', 'type', 'function', 'method', 'constructor', 'property', 'variable', 'constant', 'module', 'macro',
];

/** Words a model may use for a kind, mapped to the kinds they mean. */
export const KIND_ALIASES: ReadonlyMap<string, readonly SymbolKind[]> = new Map<string, readonly SymbolKind[]>([
  ['class', ['class', 'struct']],
  ['struct', ['struct']],
  ['interface', ['interface']],
  ['trait', ['interface']],
  ['protocol', ['interface']],
  ['enum', ['enum']],
  ['enum_member', ['enum_member']],
  ['enummember', ['enum_member']],
  ['type', ['type', 'interface', 'class', 'struct', 'enum']],
  ['typealias', ['type']],
  ['function', ['function', 'method', 'constructor']],
  ['func', ['function', 'method', 'constructor']],
  ['method', ['method', 'constructor']],
  ['constructor', ['constructor']],
  ['property', ['property']],
  ['field', ['property']],
  ['variable', ['variable', 'constant']],
  ['var', ['variable', 'constant']],
  ['constant', ['constant']],
  ['const', ['constant']],
  ['module', ['module']],
  ['namespace', ['module']],
  ['package', ['module']],
  ['macro', ['macro']],
]);

/**
 * How one node type defines a symbol. `kind` is a kind, or a function of the
 * node for the cases where the same node type means different kinds
 * (a Python function inside a class is a method).
 */
export interface DefinitionRule {
  kind: SymbolKind | ((node: SyntaxNodeLike) => SymbolKind | undefined);
  /** Field holding the name; default "name". A function digs deeper (C declarators). */
  name?: string | ((node: SyntaxNodeLike) => SyntaxNodeLike | null | undefined);
  /** Only when the node sits where this says (e.g. module-level variables, not locals). */
  where?: (node: SyntaxNodeLike) => boolean;
  /** The container named by the node itself (a Go method's receiver type). */
  container?: (node: SyntaxNodeLike) => string | undefined;
}

/** The part of web-tree-sitter's Node the tables use; kept structural so this module loads no runtime. */
export interface SyntaxNodeLike {
  type: string;
  text: string;
  parent: SyntaxNodeLike | null;
  namedChildren: (SyntaxNodeLike | null)[];
  childForFieldName(field: string): SyntaxNodeLike | null;
  firstNamedChild: SyntaxNodeLike | null;
  firstChild: SyntaxNodeLike | null;
}

export interface LanguageSpec {
  /** Grammar file in @vscode/tree-sitter-wasm/wasm. */
  grammar: string;
  definitions: Readonly<Record<string, DefinitionRule>>;
  /** Node types that make the name of the enclosing definition a container without being a definition. */
  containers?: Readonly<Record<string, (node: SyntaxNodeLike) => string | undefined>>;
  /** Leaf node types that are identifiers (for references). */
  identifiers: ReadonlySet<string>;
  /** Its comment and string rules, for telling code from the rest without a parse (codeWords.ts); none where they are too many to scan (Ruby). */
  lexicon?: Lexicon;
}

const parentType = (node: SyntaxNodeLike): string | undefined => node.parent?.type;

function hasAncestor(node: SyntaxNodeLike, types: ReadonlySet<string>, stopAt: ReadonlySet<string>): boolean {
  for (let current = node.parent; current; current = current.parent) {
    if (types.has(current.type)) return true;
    if (stopAt.has(current.type)) return false;
  }
  return false;
}

// ------------------------------------------------------------- JS / TS

const JS_MODULE_LEVEL = new Set(['program', 'export_statement', 'statement_block']);
/** A variable counts when it is declared at module (or namespace) level, not inside a function. */
function jsModuleLevel(node: SyntaxNodeLike): boolean {
  const declaration = node.parent;
  let holder = declaration?.parent;
  if (!holder || !JS_MODULE_LEVEL.has(holder.type)) return false;
  if (holder.type === 'export_statement') holder = holder.parent;
  if (holder?.type === 'statement_block') return holder.parent?.type === 'internal_module' || holder.parent?.type === 'module';
  return holder?.type === 'program';
}

function jsVariableKind(node: SyntaxNodeLike): SymbolKind | undefined {
  const value = node.childForFieldName('value');
  if (value && (value.type === 'arrow_function' || value.type === 'function_expression' || value.type === 'function')) return 'function';
  if (value && value.type === 'class') return 'class';
  return node.parent?.firstChild?.type === 'const' ? 'constant' : 'variable';
}

const JS_DEFINITIONS: Record<string, DefinitionRule> = {
  function_declaration: { kind: 'function' },
  generator_function_declaration: { kind: 'function' },
  function_signature: { kind: 'function' },
  class_declaration: { kind: 'class' },
  abstract_class_declaration: { kind: 'class' },
  method_definition: { kind: (node) => (node.childForFieldName('name')?.text === 'constructor' ? 'constructor' : 'method') },
  method_signature: { kind: 'method' },
  abstract_method_signature: { kind: 'method' },
  interface_declaration: { kind: 'interface' },
  type_alias_declaration: { kind: 'type' },
  enum_declaration: { kind: 'enum' },
  public_field_definition: { kind: 'property' },
  field_definition: { kind: 'property', name: 'property' },
  // Members of an interface or a named object type only: `{ ok: true }` in a union is not a symbol anyone looks up.
  property_signature: {
    kind: 'property',
    where: (node) => {
      const body = node.parent;
      if (body?.type === 'interface_body') return true;
      return body?.type === 'object_type' && (body.parent?.type === 'interface_declaration' || body.parent?.type === 'type_alias_declaration');
    },
  },
  internal_module: { kind: 'module' },
  module: { kind: 'module' },
  variable_declarator: { kind: jsVariableKind, where: jsModuleLevel },
};

const JS_IDENTIFIERS = new Set([
  'identifier', 'property_identifier', 'type_identifier', 'shorthand_property_identifier', 'shorthand_property_identifier_pattern', 'private_property_identifier',
]);

// ------------------------------------------------------------- Python

const PY_FUNCTION_SCOPE = new Set(['function_definition', 'lambda']);
const PY_CLASS = new Set(['class_definition']);

function pythonAssignment(node: SyntaxNodeLike): boolean {
  const statement = node.parent;
  const block = statement?.parent;
  if (statement?.type !== 'expression_statement' || !block) return false;
  if (block.type === 'module') return true;
  return block.type === 'block' && block.parent?.type === 'class_definition';
}

const PYTHON: LanguageSpec = {
  grammar: 'tree-sitter-python.wasm',
  definitions: {
    function_definition: {
      kind: (node) => (hasAncestor(node, PY_CLASS, PY_FUNCTION_SCOPE) ? (node.childForFieldName('name')?.text === '__init__' ? 'constructor' : 'method') : 'function'),
    },
    class_definition: { kind: 'class' },
    assignment: {
      kind: (node) => {
        const left = node.childForFieldName('left');
        if (left?.type !== 'identifier') return undefined;
        if (node.parent?.parent?.type !== 'module') return 'property';
        return /^[A-Z][A-Z0-9_]*$/.test(left.text) ? 'constant' : 'variable';
      },
      name: 'left',
      where: pythonAssignment,
    },
  },
  identifiers: new Set(['identifier']),
  lexicon: 'python',
};

// ------------------------------------------------------------- Go

function goTopLevel(node: SyntaxNodeLike): boolean {
  return node.parent?.parent?.type === 'source_file' || node.parent?.parent?.parent?.type === 'source_file';
}

function goReceiverType(node: SyntaxNodeLike): string | undefined {
  const receiver = node.childForFieldName('receiver');
  const match = receiver ? /([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\])?\s*\)\s*$/.exec(receiver.text) : null;
  return match?.[1];
}

const GO: LanguageSpec = {
  grammar: 'tree-sitter-go.wasm',
  definitions: {
    function_declaration: { kind: 'function' },
    method_declaration: { kind: 'method', container: goReceiverType },
    type_spec: {
      kind: (node) => {
        const type = node.childForFieldName('type')?.type;
        return type === 'struct_type' ? 'struct' : type === 'interface_type' ? 'interface' : 'type';
      },
    },
    type_alias: { kind: 'type' },
    const_spec: { kind: 'constant', where: goTopLevel },
    var_spec: { kind: 'variable', where: goTopLevel },
    field_declaration: { kind: 'property' },
    method_elem: { kind: 'method' },
    method_spec: { kind: 'method' },
  },
  identifiers: new Set(['identifier', 'field_identifier', 'type_identifier', 'package_identifier']),
  lexicon: 'go',
};

// ------------------------------------------------------------- Rust

const RUST_IMPL = new Set(['impl_item', 'trait_item']);
const RUST_FUNCTION = new Set(['function_item']);

const RUST: LanguageSpec = {
  grammar: 'tree-sitter-rust.wasm',
  definitions: {
    function_item: { kind: (node) => (hasAncestor(node, RUST_IMPL, RUST_FUNCTION) ? 'method' : 'function') },
    function_signature_item: { kind: (node) => (hasAncestor(node, RUST_IMPL, RUST_FUNCTION) ? 'method' : 'function') },
    struct_item: { kind: 'struct' },
    union_item: { kind: 'struct' },
    enum_item: { kind: 'enum' },
    enum_variant: { kind: 'enum_member' },
    trait_item: { kind: 'interface' },
    type_item: { kind: 'type' },
    mod_item: { kind: 'module' },
    const_item: { kind: 'constant' },
    static_item: { kind: 'variable' },
    macro_definition: { kind: 'macro' },
    field_declaration: { kind: 'property' },
  },
  containers: {
    impl_item: (node) => node.childForFieldName('type')?.text,
  },
  identifiers: new Set(['identifier', 'field_identifier', 'type_identifier']),
  lexicon: 'rust',
};

// ------------------------------------------------------------- Java

function firstDeclaratorName(node: SyntaxNodeLike): SyntaxNodeLike | null | undefined {
  return node.childForFieldName('declarator')?.childForFieldName('name');
}

const JAVA: LanguageSpec = {
  grammar: 'tree-sitter-java.wasm',
  definitions: {
    class_declaration: { kind: 'class' },
    record_declaration: { kind: 'class' },
    interface_declaration: { kind: 'interface' },
    annotation_type_declaration: { kind: 'interface' },
    enum_declaration: { kind: 'enum' },
    enum_constant: { kind: 'enum_member' },
    method_declaration: { kind: 'method' },
    constructor_declaration: { kind: 'constructor' },
    field_declaration: { kind: (node) => (/\bfinal\b/.test(node.firstNamedChild?.type === 'modifiers' ? node.firstNamedChild.text : '') ? 'constant' : 'property'), name: firstDeclaratorName },
  },
  identifiers: new Set(['identifier', 'type_identifier']),
  lexicon: 'java',
};

// ------------------------------------------------------------- C / C++

/** The name inside a C declarator chain (`*f(int)`, `ns::A::m`, `arr[3]`). */
function cDeclaratorName(node: SyntaxNodeLike): SyntaxNodeLike | null | undefined {
  let current: SyntaxNodeLike | null = node.childForFieldName('declarator');
  for (let depth = 0; current && depth < 8; depth++) {
    if (current.type === 'identifier' || current.type === 'field_identifier' || current.type === 'type_identifier' || current.type === 'destructor_name' || current.type === 'operator_name') return current;
    if (current.type === 'qualified_identifier') {
      current = current.childForFieldName('name');
      continue;
    }
    current = current.childForFieldName('declarator');
  }
  return undefined;
}

function cHasFunctionDeclarator(node: SyntaxNodeLike): boolean {
  let current: SyntaxNodeLike | null = node.childForFieldName('declarator');
  for (let depth = 0; current && depth < 8; depth++) {
    if (current.type === 'function_declarator') return true;
    current = current.childForFieldName('declarator');
  }
  return false;
}

const C_CLASS_BODY = new Set(['field_declaration_list']);
const withBody = (node: SyntaxNodeLike): boolean => node.childForFieldName('body') !== null;

const CPP: LanguageSpec = {
  grammar: 'tree-sitter-cpp.wasm',
  definitions: {
    function_definition: { kind: (node) => (hasAncestor(node, C_CLASS_BODY, new Set()) || node.childForFieldName('declarator')?.text.includes('::') ? 'method' : 'function'), name: cDeclaratorName },
    declaration: {
      kind: (node) => (cHasFunctionDeclarator(node) ? 'function' : undefined),
      name: cDeclaratorName,
      where: (node) => parentType(node) === 'translation_unit',
    },
    field_declaration: { kind: (node) => (cHasFunctionDeclarator(node) ? 'method' : 'property'), name: cDeclaratorName },
    struct_specifier: { kind: 'struct', where: withBody },
    union_specifier: { kind: 'struct', where: withBody },
    class_specifier: { kind: 'class', where: withBody },
    enum_specifier: { kind: 'enum', where: withBody },
    enumerator: { kind: 'enum_member' },
    type_definition: { kind: 'type', name: cDeclaratorName },
    alias_declaration: { kind: 'type' },
    namespace_definition: { kind: 'module' },
    preproc_def: { kind: 'macro' },
    preproc_function_def: { kind: 'macro' },
  },
  identifiers: new Set(['identifier', 'field_identifier', 'type_identifier', 'namespace_identifier']),
  lexicon: 'c',
};

// ------------------------------------------------------------- C#

const CSHARP: LanguageSpec = {
  grammar: 'tree-sitter-c-sharp.wasm',
  definitions: {
    class_declaration: { kind: 'class' },
    record_declaration: { kind: 'class' },
    struct_declaration: { kind: 'struct' },
    interface_declaration: { kind: 'interface' },
    enum_declaration: { kind: 'enum' },
    enum_member_declaration: { kind: 'enum_member' },
    delegate_declaration: { kind: 'type' },
    namespace_declaration: { kind: 'module' },
    file_scoped_namespace_declaration: { kind: 'module' },
    method_declaration: { kind: 'method' },
    constructor_declaration: { kind: 'constructor' },
    property_declaration: { kind: 'property' },
    event_declaration: { kind: 'property' },
    variable_declarator: {
      kind: (node) => (/\bconst\b/.test(node.parent?.parent?.text.split('=')[0] ?? '') ? 'constant' : 'property'),
      name: (node) => node.childForFieldName('name') ?? node.firstNamedChild,
      where: (node) => parentType(node.parent as SyntaxNodeLike) === 'field_declaration',
    },
  },
  identifiers: new Set(['identifier']),
  lexicon: 'csharp',
};

// ------------------------------------------------------------- Ruby

const RUBY_CLASSES = new Set(['class', 'module', 'singleton_class']);
const RUBY_METHODS = new Set(['method', 'singleton_method']);

const RUBY: LanguageSpec = {
  grammar: 'tree-sitter-ruby.wasm',
  definitions: {
    class: { kind: 'class' },
    module: { kind: 'module' },
    method: { kind: (node) => (hasAncestor(node, RUBY_CLASSES, RUBY_METHODS) ? (node.childForFieldName('name')?.text === 'initialize' ? 'constructor' : 'method') : 'function') },
    singleton_method: { kind: 'method' },
    assignment: {
      kind: (node) => (node.childForFieldName('left')?.type === 'constant' ? 'constant' : undefined),
      name: 'left',
      where: (node) => {
        const holder = node.parent;
        return holder?.type === 'program' || (holder?.type === 'body_statement' && RUBY_CLASSES.has(holder.parent?.type ?? ''));
      },
    },
  },
  identifiers: new Set(['identifier', 'constant']),
};

// ------------------------------------------------------------- by extension

const TYPESCRIPT: LanguageSpec = { grammar: 'tree-sitter-typescript.wasm', definitions: JS_DEFINITIONS, identifiers: JS_IDENTIFIERS, lexicon: 'typescript' };
const TSX: LanguageSpec = { ...TYPESCRIPT, grammar: 'tree-sitter-tsx.wasm', lexicon: 'tsx' };
const JAVASCRIPT: LanguageSpec = { ...TYPESCRIPT, grammar: 'tree-sitter-javascript.wasm', lexicon: 'javascript' };

const BY_EXTENSION: Readonly<Record<string, LanguageSpec>> = {
  '.ts': TYPESCRIPT,
  '.mts': TYPESCRIPT,
  '.cts': TYPESCRIPT,
  '.tsx': TSX,
  '.js': JAVASCRIPT,
  '.mjs': JAVASCRIPT,
  '.cjs': JAVASCRIPT,
  '.jsx': JAVASCRIPT,
  '.py': PYTHON,
  '.pyi': PYTHON,
  '.go': GO,
  '.rs': RUST,
  '.java': JAVA,
  // No C grammar ships with the package; the C++ grammar parses C.
  '.c': CPP,
  '.h': CPP,
  '.cc': CPP,
  '.cpp': CPP,
  '.cxx': CPP,
  '.hpp': CPP,
  '.hh': CPP,
  '.hxx': CPP,
  '.cs': CSHARP,
  '.rb': RUBY,
};

export function languageOf(relativePath: string): LanguageSpec | undefined {
  const extension = path.posix.extname(relativePath).toLowerCase();
  return Object.prototype.hasOwnProperty.call(BY_EXTENSION, extension) ? BY_EXTENSION[extension] : undefined;
}

/** The grammars the index may load, for packaging. */
export const GRAMMAR_FILES: readonly string[] = [...new Set(Object.values(BY_EXTENSION).map((spec) => spec.grammar))];
