import { performance } from 'node:perf_hooks';
import { nextSlice, type SliceKindNow } from '../nextSlice';

/**
 * Records of strings packed into UTF-8 buffers, a slice of the event loop at
 * a time, for a worker thread. A buffer in postMessage's transfer list moves
 * without being copied; the same records as objects are copied whole in the
 * turn that posts them. On an 18,000-file index the repository map's ranking
 * inputs (13.5 MB) took 8 to 22 ms to post that way, and a walk's stamps 5 to
 * 10 ms after 5 to 16 ms gathering them: each a main-thread stall that held
 * every discussion's stream.
 */
export interface PackedRecords {
  /** Strings per record. */
  fields: number;
  /** Whole records, every field followed by a NUL but the last of a chunk. */
  chunks: Array<Uint8Array<ArrayBuffer>>;
  /** Records left out because a field held a NUL, which would have shifted every field after it. */
  dropped: number;
}

/** A chunk ends once it holds this many characters (and one record more at most), so encoding one stays short. */
const CHUNK_CHARS = 1 << 20;

const SEPARATOR = '\0';

/** No records: nothing to move. */
export function noRecords(fields: number): PackedRecords {
  return { fields, chunks: [], dropped: 0 };
}

/**
 * Packs `items`, each as `fields` strings, working at most about `sliceMs`
 * before letting the event loop run. The items are read as they are when
 * each slice runs: hand over a copy if they may change meanwhile.
 */
export async function packInSlices<T>(items: readonly T[], fields: number, fieldsOf: (item: T) => readonly string[], sliceMs: number, kind: SliceKindNow): Promise<PackedRecords> {
  const packed = noRecords(fields);
  const encoder = new TextEncoder();
  let values: string[] = [];
  let chars = 0;
  let until = performance.now() + sliceMs;
  const endChunk = (): void => {
    if (values.length > 0) packed.chunks.push(encoder.encode(values.join(SEPARATOR)));
    values = [];
    chars = 0;
  };
  for (let at = 0; at < items.length; at++) {
    if (chars > CHUNK_CHARS) endChunk();
    // A clock read every few records: a record takes microseconds to gather.
    if (at % 32 === 31 && performance.now() > until) {
      endChunk();
      await nextSlice(kind);
      until = performance.now() + sliceMs;
    }
    const record = fieldsOf(items[at]);
    if (record.length !== fields) throw new Error(`a packed record needs ${fields} fields, not ${record.length}`);
    if (record.some((value) => value.includes(SEPARATOR))) {
      packed.dropped += 1;
      continue;
    }
    for (const value of record) {
      values.push(value);
      chars += value.length;
    }
  }
  endChunk();
  return packed;
}

/** The buffers to list in postMessage's transfer list; once posted, `packed` is empty on this side. */
export function movedBuffers(packed: PackedRecords): ArrayBuffer[] {
  return packed.chunks.map((chunk) => chunk.buffer);
}

/** The records, in the order they were packed. */
export function* unpackRecords(packed: PackedRecords): Generator<string[]> {
  // ignoreBOM: by default a U+FEFF opening a chunk, the first character of a file's name, would be dropped.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  for (const chunk of packed.chunks) {
    const values = decoder.decode(chunk).split(SEPARATOR);
    // Checked, not trusted: a chunk out of step would pair every later name with the wrong fields.
    if (values.length % packed.fields !== 0) throw new Error(`packed records out of step: ${values.length} values for ${packed.fields} fields each`);
    for (let at = 0; at < values.length; at += packed.fields) yield values.slice(at, at + packed.fields);
  }
}
