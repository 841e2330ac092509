import * as path from 'node:path';
import type { ReadPolicy } from '../read/types';
import { openVerified, readHead, ReadBoundary } from './boundary';
import { compileGlob, GLOB_LIMITS, globProblem } from './globs';
import { normalizeDenyGlob } from './secrets';
import { DENIABLE_TOOL_NAMES } from '../read/toolbox';

/**
 * A project can narrow what a discussion may do with `.repo-discuss/policy.json`:
 *
 *   { "denyTools": ["grep_files"], "denyRead": ["secrets/**", "*.sqlite"] }
 *
 * User settings add to it. Nothing here can widen access: there is no allow
 * list, and negated globs are rejected.
 */

export const POLICY_FILE = '.repo-discuss/policy.json';
const MAX_POLICY_BYTES = 256 * 1024;
const EXAMPLE = '{ "denyTools": ["grep_files"], "denyRead": ["secrets/**"] }';

export interface ExtraReadRestrictions {
  denyTools?: readonly string[];
  denyRead?: readonly string[];
}

/** A policy that cannot be used. `message` names the source and says what to fix. */
export class PolicyError extends Error {
  constructor(
    readonly source: string,
    message: string,
    /** What is wrong, without the source and the expected shape around it. */
    readonly problem: string = message,
  ) {
    super(message);
    this.name = 'PolicyError';
  }
}

export const EMPTY_POLICY: ReadPolicy = Object.freeze({ denyTools: [], denyRead: [] }) as ReadPolicy;

function fail(source: string, problem: string): never {
  throw new PolicyError(
    source,
    `Invalid read policy in ${source}: ${problem}. Expected ${EXAMPLE}. Fix or remove it, then start the discussion again.`,
    problem,
  );
}

function validateStringList(source: string, key: string, value: unknown, kind: 'tool' | 'glob'): string[] {
  if (!Array.isArray(value)) fail(source, `"${key}" must be an array of strings, got ${describeType(value)}`);
  if (kind === 'glob' && value.length > GLOB_LIMITS.maxRules) {
    fail(source, `"${key}" has ${value.length} rules, more than the ${GLOB_LIMITS.maxRules} allowed; merge rules with braces or a directory glob such as "secrets/**"`);
  }
  return value.map((item, index) => {
    if (typeof item !== 'string' || item.trim() === '') {
      fail(source, `"${key}"[${index}] must be a non-empty string, got ${describeType(item)}`);
    }
    if (item.includes('\0')) fail(source, `"${key}"[${index}] contains a NUL byte`);
    if (kind === 'glob') {
      if (item.trim().startsWith('!')) {
        // In a deny list a negation would mean "deny everything but", or be read as an allow rule.
        fail(source, `"${key}"[${index}] ("${item}") starts with "!": a policy can only deny paths, list the paths to deny instead`);
      }
      if (normalizeDenyGlob(item) === '') fail(source, `"${key}"[${index}] ("${item}") names no path`);
      // Refused here, before anything compiles it: a hostile glob held the server's event loop for minutes.
      const problem = globProblem(normalizeDenyGlob(item));
      if (problem) fail(source, `"${key}"[${index}] (${quoteStart(item)}) cannot be used: ${withoutFullStop(problem)}`);
    }
    if (kind === 'tool') checkToolName(source, key, index, item.trim());
    return item.trim();
  });
}

function withoutFullStop(sentence: string): string {
  return sentence.replace(/\.$/, '');
}

/** A rule quoted for a message, cut so a 256 KiB rule does not become the message. */
function quoteStart(item: string): string {
  return item.length > 60 ? `${JSON.stringify(item.slice(0, 60)).slice(0, -1)}…"` : JSON.stringify(item);
}

/** Denying a name no tool has would silently deny nothing (`"READ_FILE"` left read_file on). */
function checkToolName(source: string, key: string, index: number, name: string): void {
  if (DENIABLE_TOOL_NAMES.includes(name)) return;
  const known = DENIABLE_TOOL_NAMES.map((tool) => `"${tool}"`).join(', ');
  const sameLetters = DENIABLE_TOOL_NAMES.find((tool) => tool.toLowerCase() === name.toLowerCase().replace(/-/g, '_'));
  const hint = sameLetters ? ` (did you mean "${sameLetters}"?)` : '';
  fail(source, `"${key}"[${index}] names no tool: ${quoteStart(name)}${hint}; the tools are ${known}`);
}

/** The whole list is matched on every read: its expanded size is bounded too. */
function checkRuleSetSize(source: string, globs: readonly string[]): void {
  let total = 0;
  globs.forEach((glob, index) => {
    try {
      total += compileGlob(normalizeDenyGlob(glob), { nocase: true, nonegate: true }).expandedLength;
    } catch (error) {
      fail(source, `"denyRead"[${index}] (${quoteStart(glob)}) cannot be used: ${withoutFullStop((error as Error).message)}`);
    }
    if (total > GLOB_LIMITS.maxRuleSetExpandedLength) {
      fail(
        source,
        `"denyRead" up to [${index}] expands to more than ${GLOB_LIMITS.maxRuleSetExpandedLength} characters of globs; use fewer or shorter {a,b} groups, or a directory glob such as "secrets/**"`,
      );
    }
  });
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string' ? `the string ${JSON.stringify(value.slice(0, 40))}` : `a ${typeof value}`;
}

/** Parses and validates policy JSON. Throws `PolicyError` naming `source`. */
export function parsePolicy(text: string, source: string = POLICY_FILE): ReadPolicy {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    fail(source, `it is not valid JSON (${(error as Error).message})`);
  }
  return validatePolicyObject(parsed, source);
}

function validatePolicyObject(parsed: unknown, source: string): ReadPolicy {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    fail(source, `the top level must be a JSON object, got ${describeType(parsed)}`);
  }
  const record = parsed as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== 'denyTools' && key !== 'denyRead' && key !== '$schema') {
      // Quoted like every other item: a key is the repository's text, and a line break in it forged a line of the message.
      fail(source, `unknown key ${quoteStart(key)}; only "denyTools" and "denyRead" are allowed, and they can only narrow access`);
    }
  }
  const denyTools = record.denyTools === undefined ? [] : validateStringList(source, 'denyTools', record.denyTools, 'tool');
  const denyRead = record.denyRead === undefined ? [] : validateStringList(source, 'denyRead', record.denyRead, 'glob');
  checkRuleSetSize(source, denyRead);
  return { denyTools, denyRead };
}

/** Union of all restrictions, de-duplicated, order kept. */
export function mergePolicies(...parts: ReadonlyArray<ExtraReadRestrictions | undefined>): ReadPolicy {
  const denyTools = new Set<string>();
  const denyRead = new Set<string>();
  for (const part of parts) {
    for (const tool of part?.denyTools ?? []) denyTools.add(tool);
    for (const glob of part?.denyRead ?? []) denyRead.add(glob);
  }
  return { denyTools: [...denyTools], denyRead: [...denyRead] };
}

/**
 * What is wrong with the user's `denyRead` setting, checked as a start would
 * check it, so that configure can refuse it at once and keep the old one.
 */
export function denyReadSettingProblem(denyRead: readonly string[]): string | undefined {
  try {
    validatePolicyObject({ denyRead }, 'the user settings');
    return undefined;
  } catch (error) {
    if (error instanceof PolicyError) return error.problem;
    throw error;
  }
}

/**
 * Reads `<root>/.repo-discuss/policy.json` (absent means no restrictions) and
 * adds the user's extra restrictions. Throws `PolicyError` when the file or
 * the settings are malformed: the caller must refuse to start rather than
 * run with a policy it misread.
 */
export async function loadPolicy(root: string, extra?: ExtraReadRestrictions): Promise<ReadPolicy> {
  const userPolicy = extra
    ? validatePolicyObject(
        {
          ...(extra.denyTools !== undefined ? { denyTools: extra.denyTools } : {}),
          ...(extra.denyRead !== undefined ? { denyRead: extra.denyRead } : {}),
        },
        'the user settings',
      )
    : EMPTY_POLICY;

  // Read through the boundary: a committed symlink must not make us parse (and echo) an outside file.
  const source = path.join(path.resolve(root), POLICY_FILE);
  const boundary = await ReadBoundary.create(root);
  const resolved = await boundary.resolve(POLICY_FILE);
  if (!resolved.ok) {
    if (resolved.kind === 'not_found') return mergePolicies(userPolicy);
    if (resolved.kind === 'outside') {
      fail(source, 'it is a symbolic link leading outside the folder; make it a regular file inside the folder');
    }
    fail(source, `it could not be opened (${resolved.kind === 'loop' ? 'symbolic link loop' : resolved.kind})`);
  }
  if (resolved.kind !== 'file') fail(source, 'it is not a regular file');
  if (resolved.size > MAX_POLICY_BYTES) fail(source, `it is larger than ${MAX_POLICY_BYTES / 1024} KiB`);

  // Opened verified and read bounded: a policy file swapped for a link (or a FIFO) after the check is not read.
  const opened = await openVerified(resolved.realPath, 'file');
  if (!opened.ok) fail(source, `it could not be read (${opened.refusal === 'changed' ? 'it changed while being read' : opened.refusal})`);
  let text: string;
  try {
    const head = await readHead(opened.handle, MAX_POLICY_BYTES + 1);
    if (head.length > MAX_POLICY_BYTES) fail(source, `it is larger than ${MAX_POLICY_BYTES / 1024} KiB`);
    text = head.toString('utf8');
  } catch (error) {
    if (error instanceof PolicyError) throw error;
    fail(source, `it could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    await opened.handle.close().catch(() => undefined);
  }
  return mergePolicies(parsePolicy(text, source), userPolicy);
}
