import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ReadPolicy } from './types';
import { ReadBoundary } from './boundary';
import { trimToUtf8Boundary } from './readTools';
import { walkFiles } from './walk';

/**
 * Context given to the model at the start of a discussion: a small summary of
 * the folder and the project's agent instruction files. Both are bounded so a
 * huge tree or a huge instruction file cannot delay or flood the first turn.
 */

export const SUMMARY_LIMITS = Object.freeze({
  maxChars: 4000,
  walkMaxEntries: 5000,
  walkTimeMs: 1500,
  topLevelNames: 80,
  extensions: 20,
});

export const INSTRUCTION_FILES: readonly string[] = ['AGENTS.md', 'CLAUDE.md', '.github/copilot-instructions.md'];
export const INSTRUCTION_FILE_MAX_BYTES = 16 * 1024;

const MANIFEST_NAMES = new Set([
  'package.json', 'tsconfig.json', 'deno.json', 'Cargo.toml', 'go.mod', 'pyproject.toml', 'setup.py',
  'requirements.txt', 'Pipfile', 'pom.xml', 'build.gradle', 'build.gradle.kts', 'settings.gradle',
  'Gemfile', 'composer.json', 'mix.exs', 'pubspec.yaml', 'Package.swift', 'CMakeLists.txt', 'Makefile',
  'meson.build', 'BUILD', 'BUILD.bazel', 'WORKSPACE', 'flake.nix', 'Dockerfile', 'docker-compose.yml',
]);

function isManifest(name: string): boolean {
  return MANIFEST_NAMES.has(name) || name.endsWith('.csproj') || name.endsWith('.sln') || name.endsWith('.fsproj');
}

function sortedNames(entries: fs.Dirent[]): fs.Dirent[] {
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function clampToChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = '\n[summary cut]';
  const cut = text.slice(0, maxChars - marker.length);
  const lastNewline = cut.lastIndexOf('\n');
  return `${lastNewline > 0 ? cut.slice(0, lastNewline) : cut}${marker}`;
}

/** A few lines describing the folder: top level, manifests, file counts by extension, whether it is a git repo. */
export async function summarizeRepo(root: string, policy: ReadPolicy): Promise<string> {
  const boundary = await ReadBoundary.create(root, policy.denyRead);
  let topLevel: fs.Dirent[] = [];
  try {
    topLevel = sortedNames(await fs.promises.readdir(boundary.root, { withFileTypes: true }));
  } catch {
    // unreadable root: the rest of the summary says little, which is accurate
  }

  const isGitRepository = topLevel.some((entry) => entry.name === '.git');
  const manifests = topLevel.filter((entry) => entry.isFile() && isManifest(entry.name)).map((entry) => entry.name);
  const shownTopLevel = topLevel
    .slice(0, SUMMARY_LIMITS.topLevelNames)
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.isSymbolicLink() ? `${entry.name}@` : entry.name));
  const hiddenTopLevel = topLevel.length - shownTopLevel.length;

  const countsByExtension = new Map<string, number>();
  let fileCount = 0;
  const stats = await walkFiles(
    {
      boundary,
      startDirectory: boundary.root,
      maxEntries: SUMMARY_LIMITS.walkMaxEntries,
      deadline: performance.now() + SUMMARY_LIMITS.walkTimeMs,
    },
    (file) => {
      fileCount += 1;
      const extension = path.posix.extname(file.relativePath).toLowerCase() || '(none)';
      countsByExtension.set(extension, (countsByExtension.get(extension) ?? 0) + 1);
    },
  );
  const byExtension = [...countsByExtension.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, SUMMARY_LIMITS.extensions)
    .map(([extension, count]) => `${extension} ${count}`);
  const partial = stats.stoppedBy === 'entry_limit' || stats.stoppedBy === 'deadline';

  const lines = [
    `Folder: ${path.basename(boundary.root) || boundary.root}${isGitRepository ? ' (a git repository)' : ' (not a git repository)'}`,
    `Top level (${topLevel.length} entries): ${shownTopLevel.join(', ')}${hiddenTopLevel > 0 ? `, … and ${hiddenTopLevel} more` : ''}`,
  ];
  if (manifests.length > 0) lines.push(`Manifests: ${manifests.join(', ')}`);
  lines.push(
    `Files by extension (${partial ? `first ${fileCount} files seen; the tree is larger` : `${fileCount} files`}; gitignored, node_modules/ and .git/ left out): ${byExtension.join(', ') || 'none'}`,
  );
  return clampToChars(lines.join('\n'), SUMMARY_LIMITS.maxChars);
}

async function readHead(realPath: string, maxBytes: number): Promise<Buffer> {
  const handle = await fs.promises.open(realPath, 'r');
  try {
    const buffer = Buffer.alloc(maxBytes);
    let filled = 0;
    while (filled < maxBytes) {
      const { bytesRead } = await handle.read(buffer, filled, maxBytes - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}

/**
 * The project's agent instruction files, each cut at 16 KiB (marked). A file
 * is included only if its real path is inside the folder and not denied, so a
 * committed `AGENTS.md -> ~/.ssh/config` contributes nothing.
 */
export async function readInstructionFiles(root: string, policy: ReadPolicy): Promise<Array<{ path: string; text: string }>> {
  const boundary = await ReadBoundary.create(root, policy.denyRead);
  const found: Array<{ path: string; text: string }> = [];
  const seenRealPaths = new Set<string>();
  for (const name of INSTRUCTION_FILES) {
    const resolved = await boundary.resolve(name);
    if (!resolved.ok || resolved.kind !== 'file') continue;
    // CLAUDE.md is often a symlink to AGENTS.md: include the text once.
    if (seenRealPaths.has(resolved.realPath)) continue;
    seenRealPaths.add(resolved.realPath);
    let head: Buffer;
    try {
      head = await readHead(resolved.realPath, INSTRUCTION_FILE_MAX_BYTES);
    } catch {
      continue;
    }
    if (head.subarray(0, 8192).includes(0)) continue; // binary: not instructions
    const cut = resolved.size > head.length;
    let text = cut ? trimToUtf8Boundary(head).toString('utf8') : head.toString('utf8');
    if (cut) {
      text += `\n[… cut: ${name} is ${Math.ceil(resolved.size / 1024)} KiB; only the first ${INSTRUCTION_FILE_MAX_BYTES / 1024} KiB are included. Use read_file for the rest.]`;
    }
    found.push({ path: name, text });
  }
  return found;
}
