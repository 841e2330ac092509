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

/** What stops a rehearsed turn: its time limit or the server's shutdown, and a real question asked meanwhile. */
export interface RehearsalOptions {
  signal: AbortSignal;
  /** False once a real question has been asked: the turn is then not sent. */
  stillWanted: () => boolean;
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
 * False when it stopped before its question because a real one was asked;
 * rejects when the turn ends in an error or is stopped (`signal`).
 */
export async function rehearseTurn(understudy: DiscussionService, folder: string, options: RehearsalOptions): Promise<boolean> {
  const { signal, stillWanted } = options;
  try {
    const { discussionId } = await understudy.start({ folder });
    if (signal.aborted) throw stoppedError();
    if (!stillWanted()) return false;
    const failures: string[] = [];
    // A cancelled turn still ends with turn_complete.
    const cancel = (): void => understudy.cancel(discussionId);
    signal.addEventListener('abort', cancel, { once: true });
    try {
      await new Promise<void>((resolve) => {
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
      signal.removeEventListener('abort', cancel);
    }
    if (signal.aborted) throw stoppedError();
    if (failures.length > 0) throw new Error(failures.join('; '));
    return true;
  } finally {
    await understudy.dispose();
  }
}

function stoppedError(): Error {
  return new Error('it was stopped before its turn ended');
}

/**
 * Lends a model and a scratch store for one rehearsed turn and takes both
 * down afterwards (the entry point makes them: a model that asks an endpoint
 * of the server's own on the loopback, a store in a private temporary
 * folder). Settles with what the turn settled with.
 */
export type RehearsalStage = (turn: (model: ChatModel, scratch: DiscussionStore) => Promise<boolean>) => Promise<boolean>;

/** Rehearses the turn of `rehearseTurn` on an open discussion's folder (DiscussionService.rehearse). */
export type RehearsedTurn = (model: ChatModel, scratch: DiscussionStore, options: RehearsalOptions) => Promise<boolean>;

/**
 * The one rehearsal of a server. None once a real question came first: its
 * turn has run that code already, and a rehearsal would only take a CPU from
 * the turns streaming. Never rejects: a turn that was not rehearsed only runs
 * colder, and the log says why.
 */
export class FirstTurnRehearsal {
  private rehearsal: Promise<void> | undefined;
  private readonly stopping = new AbortController();

  constructor(
    private readonly stage: RehearsalStage,
    private readonly options: { logger: Logger; clock: Clock; /** Whether a real question has been asked of this server. */ asked: () => boolean; limitMs?: number },
  ) {}

  /** Rehearses through `turn` if no rehearsal has run; settles when that one has ended. */
  run(turn: RehearsedTurn): Promise<void> {
    return (this.rehearsal ??= this.rehearse(turn));
  }

  /** Stops the rehearsal under way and any to come (the server shuts down); settles once it has ended. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.rehearsal;
  }

  private async rehearse(turn: RehearsedTurn): Promise<void> {
    const { logger, clock, asked } = this.options;
    if (asked() || this.stopping.signal.aborted) return;
    const started = clock.now();
    const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(this.options.limitMs ?? REHEARSAL_LIMIT_MS)]);
    try {
      const rehearsed = await this.stage((model, scratch) => turn(model, scratch, { signal, stillWanted: () => !asked() }));
      if (rehearsed) logger.info(`Rehearsed a turn ahead of the first question, on the loopback (${clock.now() - started} ms).`);
    } catch (err) {
      logger.info(`The first question was not rehearsed (${errorText(err)}); it runs a turn's code for the first time.`);
    }
  }
}
