import { openVerified, readHead, ReadBoundary } from '../access/boundary';
import { trimToUtf8Boundary } from '../read/answers';
import type { ReadPolicy } from '../read/types';

/**
 * The project's agent instruction files, given to the model at the start of a
 * discussion as data (never run), each bounded so a huge one cannot flood the
 * first turn.
 */
export const INSTRUCTION_FILES: readonly string[] = ['AGENTS.md', 'CLAUDE.md', '.github/copilot-instructions.md'];
export const INSTRUCTION_FILE_MAX_BYTES = 16 * 1024;

/** The first `maxBytes` of a checked file, opened verified (see boundary.ts): a swapped-in link is not read. */
async function readVerifiedHead(realPath: string, maxBytes: number): Promise<Buffer> {
  const opened = await openVerified(realPath, 'file');
  if (!opened.ok) throw new Error(opened.refusal);
  try {
    return await readHead(opened.handle, maxBytes);
  } finally {
    await opened.handle.close();
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
      head = await readVerifiedHead(resolved.realPath, INSTRUCTION_FILE_MAX_BYTES);
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
