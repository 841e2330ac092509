import { errorText } from '../../../shared/errorText';
import type { DiscussionEvent } from '../../../shared/protocol';
import type { ChatModel } from '../model/types';
import type { DiscussionStore } from '../store/types';
import type { Clock, Logger } from './deps';
import type { DiscussionService } from './service';

/** What a rehearsed turn asks: any short question does, the model's reply is fixed. */
const REHEARSAL_QUESTION = 'Say hello.';
/** The one subscriber a rehearsed discussion has. */
const REHEARSAL_SUBSCRIBER = 'rehearsal';
/**
 * How long a rehearsal may take before it is stopped: one turn against an
 * endpoint on the loopback takes tens of milliseconds; on a machine so busy
 * that it takes seconds, the rehearsal is only in the way.
 */
export const REHEARSAL_LIMIT_MS = 5_000;

/** What stops a rehearsed turn: its time limit, a real question, or the server's shutdown; the abort's reason says which. */
export interface RehearsalOptions {
  signal: AbortSignal;
}

/**
 * One turn rehearsed in `understudy`, a service of its own (so it counts
 * against no limit, lists nowhere, and sends no client an event), on
 * `folder`, through the code a real question takes: a discussion's start and
 * first save, the system prompt and tools, the budget, the request, the
 * streamed reply, the events and the turn's saves. Code runs slowly the first
 * time it runs: a fresh server's first question reached its first delta
 * 3.5-5 ms later than the next discussion's first question, and the warm-up
 * of the model's own code (model/openai/warmup.ts) left most of that.
 *
 * Rejects when the turn ends in an error, or with the signal's reason once
 * it is stopped; it then stops waiting for the turn's end, and its
 * discussion's close bounds how long the turn may take to unwind.
 */
export async function rehearseTurn(understudy: DiscussionService, folder: string, options: RehearsalOptions): Promise<void> {
  const { signal } = options;
  try {
    const { discussionId } = await understudy.start({ folder });
    signal.throwIfAborted();
    const failures: string[] = [];
    let stop = (): void => undefined;
    try {
      await new Promise<void>((resolve) => {
        stop = () => {
          understudy.cancel(discussionId);
          resolve();
        };
        signal.addEventListener('abort', stop, { once: true });
        understudy.subscribe(discussionId, REHEARSAL_SUBSCRIBER, {
          deliver: (event: DiscussionEvent) => {
            if (event.type === 'error') failures.push(event.message);
            if (event.type === 'turn_complete') resolve();
          },
        });
        understudy.send(discussionId, REHEARSAL_QUESTION);
      });
    } finally {
      // The signal outlives the turn (the server's shutdown): cancelling a discussion disposed of would throw there.
      signal.removeEventListener('abort', stop);
    }
    signal.throwIfAborted();
    if (failures.length > 0) throw new Error(failures.join('; '));
  } finally {
    await understudy.dispose();
  }
}

/**
 * Lends a model and a scratch store for one rehearsed turn and takes both
 * down afterwards (the entry point makes them: a model that asks an endpoint
 * of the server's own on the loopback, a store in a private temporary
 * folder). Settles with what the turn settled with.
 */
export type RehearsalStage = (turn: (model: ChatModel, scratch: DiscussionStore) => Promise<boolean>) => Promise<boolean>;

/** Rehearses the turn of `rehearseTurn` on an open discussion's folder (DiscussionService.rehearse); false when there was nothing to rehearse. */
export type RehearsedTurn = (model: ChatModel, scratch: DiscussionStore, options: RehearsalOptions) => Promise<boolean>;

/**
 * The one rehearsal of a server. A real question stops it, under way or to
 * come: that turn runs the code itself, and a rehearsal beside it would only
 * take a CPU from it. Never rejects: a turn that was not rehearsed only runs
 * colder, and the log says why.
 */
export class FirstTurnRehearsal {
  private rehearsal: Promise<void> | undefined;
  private readonly stopping = new AbortController();

  constructor(
    private readonly stage: RehearsalStage,
    private readonly options: { logger: Logger; clock: Clock; limitMs?: number },
  ) {}

  /**
   * Rehearses through `turn` unless a rehearsal has run or it was stopped;
   * settles when that one has ended. A discussion with nothing to rehearse
   * (closed already, or asking a VS Code model) leaves the slot to the next
   * one: a server whose first discussion asked a VS Code model ran its first
   * question to an endpoint cold.
   */
  run(turn: RehearsedTurn): Promise<void> {
    const under = this.rehearsal;
    if (under === undefined) return (this.rehearsal = this.rehearse(turn));
    // Asked while another discussion's was under way: if that one found nothing (its slot let go, or taken by the
    // next in line), this one waits its turn and is tried.
    return under.then(() => (this.rehearsal === under ? undefined : this.run(turn)));
  }

  /** A real question was sent: stops the rehearsal under way, and any to come. */
  questionAsked(): void {
    if (!this.stopping.signal.aborted) this.stopping.abort(new Error('a question came first'));
  }

  /** The server shuts down: stops the rehearsal under way and any to come; settles once it has ended. */
  async stop(): Promise<void> {
    if (!this.stopping.signal.aborted) this.stopping.abort(new Error('the server is shutting down'));
    await this.rehearsal;
  }

  private async rehearse(turn: RehearsedTurn): Promise<void> {
    const { logger, clock } = this.options;
    if (this.stopping.signal.aborted) return;
    const started = clock.now();
    const limitMs = this.options.limitMs ?? REHEARSAL_LIMIT_MS;
    const limit = AbortSignal.timeout(limitMs);
    const signal = AbortSignal.any([this.stopping.signal, limit]);
    try {
      const rehearsed = await this.stage((model, scratch) => turn(model, scratch, { signal }));
      if (rehearsed) logger.info(`Rehearsed a turn ahead of the first question, on the loopback (${clock.now() - started} ms).`);
      else this.rehearsal = undefined;
    } catch (err) {
      const reason = limit.aborted && !this.stopping.signal.aborted ? `it took over ${limitMs / 1000} s` : errorText(err);
      logger.info(`The first question was not rehearsed (${reason}); it runs a turn's code for the first time.`);
    }
  }
}
