/** Root-relative paths ('' for the root, `/` between names): containment, joining, and the walk's order. */

/** Whether the root-relative `relativePath` is `directory` or under it ('' is the root, which holds everything). */
export function isWithin(relativePath: string, directory: string): boolean {
  return directory === '' || relativePath === directory || relativePath.startsWith(`${directory}/`);
}

/** `name` inside the root-relative directory `parent` ('' or '.' for the root). */
export function joinRelative(parent: string, name: string): string {
  return parent === '' || parent === '.' ? name : `${parent}/${name}`;
}

/**
 * Sort key giving the walk's order: depth-first, names in code-unit order.
 * Plain string order would put `a.txt` before `a/x` ('.' < '/'); mapping the
 * separator below every other character makes a directory's contents sort
 * right after its name, as the walk visits them.
 */
export function walkOrderKey(relativePath: string): string {
  return relativePath.replaceAll('/', '\u0000');
}

const SEPARATOR = '/'.charCodeAt(0);

/**
 * Compares root-relative paths as their walkOrderKey would, without building
 * the keys: merging 400 paths of a slice of a walk's answer into 18,000
 * indexed, a key built for each, took 3 to 7.5 ms, and 0.7 to 1 ms this way.
 */
export function compareWalkOrder(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // The separator below every other character (a path holds no NUL).
    if (x === SEPARATOR) return -1;
    if (y === SEPARATOR) return 1;
    return x - y;
  }
  return a.length - b.length;
}

/** The first position in `ordered` (in walk order) from `from` on whose path is not before `relativePath`: where it is or would go. */
export function walkOrderPosition(ordered: readonly string[], relativePath: string, from = 0): number {
  let low = from;
  let high = ordered.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareWalkOrder(ordered[middle], relativePath) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The first position in `items` from `from` on, sorted by `keyOf`, whose key is at least `key`. */
export function lowerBound<T>(items: readonly T[], key: string, keyOf: (item: T) => string, from = 0): number {
  let low = from;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (keyOf(items[middle]) < key) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Sorts root-relative paths into walk order, in place. */
export function sortInWalkOrder(paths: string[]): string[] {
  const keyed = paths.map((relativePath) => ({ relativePath, key: walkOrderKey(relativePath) }));
  keyed.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (let i = 0; i < keyed.length; i++) paths[i] = keyed[i].relativePath;
  return paths;
}

/**
 * `ordered` (in walk order) with `added` merged in. `added` is sorted first
 * only when it is not in walk order already, as a walk's own results are.
 * A few added paths are placed by binary search, many in one pass over
 * `ordered`; each slice of a walk's answer pays for this again
 * (FolderIndex.applyInSlices).
 */
export function mergeInWalkOrder(ordered: readonly string[], added: string[]): string[] {
  if (added.some((relativePath, i) => i > 0 && compareWalkOrder(added[i - 1], relativePath) > 0)) sortInWalkOrder(added);
  const merged: string[] = [];
  let next = 0;
  if (added.length * Math.log2(ordered.length + 2) < ordered.length) {
    let from = 0;
    for (; next < added.length; next++) {
      const at = walkOrderPosition(ordered, added[next], from);
      for (; from < at; from++) merged.push(ordered[from]);
      merged.push(added[next]);
    }
    for (; from < ordered.length; from++) merged.push(ordered[from]);
    return merged;
  }
  for (const relativePath of ordered) {
    while (next < added.length && compareWalkOrder(added[next], relativePath) < 0) merged.push(added[next++]);
    merged.push(relativePath);
  }
  while (next < added.length) merged.push(added[next++]);
  return merged;
}
