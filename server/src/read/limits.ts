import { GREP_LIMITS } from '../search/grepCore';
import { SEARCH_LIMITS } from '../search/searchJobs';

/** What one read tool call may read, list or return. */
export const READ_LIMITS = Object.freeze({
  readMaxLines: 2000,
  readMaxBytes: 256 * 1024,
  /** Below this size a cut read_file still counts the file's lines so the model knows how much is left. */
  readCountTotalBelowBytes: 32 * 1024 * 1024,
  /**
   * How far into a file read_file looks for start_line. Finding a line means
   * reading every byte before it, and the model waits for the answer: a deep
   * start_line in a multi-GiB file (a log, a sparse file) took seconds to
   * minutes. Lines further in are out of reach, and the model is told so.
   * At least readCountTotalBelowBytes, so a line count given in one answer
   * is always reachable in the next.
   */
  readScanMaxBytes: 64 * 1024 * 1024,
  /**
   * A read stops here whatever the file does. A file that grew while it was
   * read (or became a huge sparse file after it was checked) kept read_file
   * reading for over a minute; a read never goes past the size the file had
   * when it was opened, nor runs longer than this.
   */
  readMaxMs: 10_000,
  listMaxEntries: 500,
  findMaxResults: SEARCH_LIMITS.findMaxResults,
  grepMaxMatches: GREP_LIMITS.maxMatches,
  grepMaxLineChars: GREP_LIMITS.maxLineChars,
  /** Bigger files are not searched line by line; ones that match are named (with a note). */
  grepMaxFileBytes: GREP_LIMITS.maxFileBytes,
  /** A walk stops here even without enough results, so one call cannot run for minutes. */
  walkMaxEntries: SEARCH_LIMITS.walkMaxEntries,
  binarySniffBytes: GREP_LIMITS.binarySniffBytes,
});

/**
 * What the attachments of one message may carry to the model. Their own cap,
 * apart from the 64 KiB on the typed text: pointing at a file is the way the
 * message cap tells people to share code, so it must not eat into it.
 */
export const ATTACHMENT_LIMITS = Object.freeze({
  maxCount: 10,
  perAttachmentBytes: 32 * 1024,
  totalBytes: 96 * 1024,
  maxSymbolChars: 200,
});
