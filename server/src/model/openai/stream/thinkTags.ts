/**
 * Reasoning sent inside the content as a `<think>…</think>` block, or before
 * a lone `</think>`, split off from the answer as it streams.
 */

export interface ThinkSegment {
  reasoning: boolean;
  text: string;
  /** Everything pushed out as answer so far was this reasoning (untagged; see ThinkTagSplitter): take it back. */
  retractsAnswer?: boolean;
}

const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';

/**
 * Splits a leading `<think>…</think>` block off streamed content. Reasoning
 * models served without a reasoning parser (Ollama before `think`, llama.cpp
 * with `--reasoning-format none`, LM Studio, vLLM without `--reasoning-parser`)
 * put their reasoning in the content this way, and the tags may be cut
 * anywhere between deltas. Only a block at the start counts: a `<think>` later
 * in an answer is text the model means to show.
 *
 * Some servers send the block without its opening tag (vLLM 0.7 with the
 * DeepSeek-R1 chat template, which puts `<think>\n` in the prompt): the reply
 * is reasoning up to a lone `</think>`. That is only known once the tag
 * arrives, and holding every reply back until then would delay every normal
 * answer, so the text streams as answer and is taken back (a segment with
 * `retractsAnswer`) when a lone closing tag ends it. A `</think>` counts as
 * closing untagged reasoning only when all of these hold, so an answer that
 * merely mentions the tag keeps it:
 * - it is the first `</think>` of a reply that did not open with `<think>`,
 *   and no `<think>` came before it;
 * - it stands on a line of its own: after the reply's start or a line break
 *   (spaces allowed), and followed by a line break or the end of the reply;
 * - it is not inside a fenced code block (an even number of ``` before it).
 */
export class ThinkTagSplitter {
  private state: 'start' | 'thinking' | 'afterThinking' | 'watching' | 'answer' = 'start';
  private held = '';
  /** The answer shown so far while a lone `</think>` could still turn it into reasoning. */
  private shown = '';

  push(piece: string): ThinkSegment[] {
    const out: ThinkSegment[] = [];
    let rest = piece;
    while (rest !== '') {
      switch (this.state) {
        case 'start': {
          const text = this.held + rest;
          rest = '';
          const trimmed = text.trimStart();
          if (trimmed.startsWith(THINK_OPEN)) {
            this.held = '';
            this.state = 'thinking';
            rest = trimmed.slice(THINK_OPEN.length);
          } else if (trimmed === '' || THINK_OPEN.startsWith(trimmed)) {
            // Could still become `<think>`: wait for more.
            this.held = text;
          } else {
            this.held = '';
            this.state = 'watching';
            rest = text;
          }
          break;
        }
        case 'watching': {
          const text = this.held + rest;
          rest = '';
          this.held = '';
          const end = text.indexOf(THINK_CLOSE);
          if (end < 0) {
            // Hold back what may be the start of `</think>`; show the rest.
            const keep = partialSuffix(text, THINK_CLOSE);
            this.held = text.slice(text.length - keep);
            this.showWhileWatching(out, text.slice(0, text.length - keep));
            break;
          }
          const after = text.slice(end + THINK_CLOSE.length);
          if (/^[ \t]*$/.test(after)) {
            // Whether a line break follows is not known yet.
            this.showWhileWatching(out, text.slice(0, end));
            this.held = text.slice(end);
            break;
          }
          rest = this.closeUntagged(out, text.slice(0, end), after);
          break;
        }
        case 'thinking': {
          const text = this.held + rest;
          rest = '';
          const end = text.indexOf(THINK_CLOSE);
          if (end >= 0) {
            if (end > 0) out.push({ reasoning: true, text: text.slice(0, end) });
            this.held = '';
            this.state = 'afterThinking';
            rest = text.slice(end + THINK_CLOSE.length);
          } else {
            // Hold back what may be the start of `</think>`.
            const keep = partialSuffix(text, THINK_CLOSE);
            this.held = text.slice(text.length - keep);
            if (text.length > keep) out.push({ reasoning: true, text: text.slice(0, text.length - keep) });
          }
          break;
        }
        case 'afterThinking': {
          // The blank lines between `</think>` and the answer are not part of it.
          const trimmed = rest.trimStart();
          rest = '';
          if (trimmed !== '') {
            this.state = 'answer';
            out.push({ reasoning: false, text: trimmed });
          }
          break;
        }
        case 'answer':
          out.push({ reasoning: false, text: rest });
          rest = '';
          break;
      }
    }
    return out;
  }

  /** What is still held when the reply ends: unfinished tags are what they look like. */
  flush(): ThinkSegment[] {
    const held = this.held;
    this.held = '';
    if (held === '') return [];
    if (this.state === 'start') {
      this.state = 'answer';
      return [{ reasoning: false, text: held }];
    }
    if (this.state === 'watching') {
      const out: ThinkSegment[] = [];
      // A held `</think>` with only spaces after it ends the reply: that is a line end too.
      if (held.startsWith(THINK_CLOSE)) this.closeUntagged(out, '', held.slice(THINK_CLOSE.length));
      else this.showWhileWatching(out, held);
      return out;
    }
    return this.state === 'thinking' ? [{ reasoning: true, text: held }] : [];
  }

  private showWhileWatching(out: ThinkSegment[], text: string): void {
    if (text === '') return;
    this.shown += text;
    out.push({ reasoning: false, text });
  }

  /**
   * At the first `</think>` of a reply that did not open with `<think>`:
   * reasoning if it closes untagged reasoning (see the class comment), else
   * plain answer text from here on. Returns what follows the tag.
   */
  private closeUntagged(out: ThinkSegment[], before: string, after: string): string {
    const reasoning = this.shown + before;
    const fences = reasoning.split('```').length - 1;
    const closesReasoning =
      !reasoning.includes(THINK_OPEN) && /(?:^|\n)[ \t]*$/.test(reasoning) && /^[ \t]*(?:\r?\n|$)/.test(after) && fences % 2 === 0;
    const retractsAnswer = this.shown !== '';
    this.shown = '';
    if (!closesReasoning) {
      this.state = 'answer';
      out.push({ reasoning: false, text: before + THINK_CLOSE + after });
      return '';
    }
    this.state = 'afterThinking';
    out.push({ reasoning: true, text: reasoning.trimEnd(), ...(retractsAnswer ? { retractsAnswer } : {}) });
    return after;
  }
}

/** Length of the longest end of `text` that begins `tag` (a tag cut off by the end of a delta). */
function partialSuffix(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}
