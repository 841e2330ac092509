/**
 * Drives the real terminal client (and the real server it starts) through
 * every path by which outside text reaches the terminal, with the fake
 * endpoint scripted to carry hostile control sequences in each: the reply,
 * tool names and arguments, a file name in the folder, a refusal reason, an
 * endpoint's error message, a task card, the task printed to stdout, a
 * discussion title, the model list and the exported discussion. The output of
 * each path is kept apart, to be judged by hostileText.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FakeOpenAI, FakeStep, FakeToolCall } from '../support/fakeOpenAI';
import { asFileName, type HostileSequence } from './hostileText';
import { PROMPT, Sandbox, TerminalProcess, countOf, runClient, stripAnsi } from './terminalProcess';

export interface ChannelOutput {
  channel: string;
  /** The sequences this path was given. */
  tried: readonly HostileSequence[];
  /** What the client wrote meanwhile (stdout and stderr; one stream in a pseudo-terminal). */
  output: string;
}

export interface HostileRun {
  channels: ChannelOutput[];
  /** Lines typed into the interactive client, which a pseudo-terminal echoes. */
  typed: string[];
  /**
   * Everything each process wrote. A channel's output is cut where a prompt
   * showed, which can split readline's redraw of it; judge escapes on this.
   */
  processes: string[];
  discussionId: string;
}

/** Each sequence as two deltas cut in the middle of its escape, then a line end. */
function splitDeltas(sequences: readonly HostileSequence[]): string[] {
  return sequences.flatMap((s) => {
    const at = Math.ceil(s.text.length * 0.6);
    return [s.text.slice(0, at), `${s.text.slice(at)}\n`];
  });
}

/** The title is the question's first line, cut to 60 characters: as many sequences as fit in it, shortest first. */
function titleOf(sequences: readonly HostileSequence[]): { line: string; tried: HostileSequence[] } {
  const tried: HostileSequence[] = [];
  let line = '';
  for (const s of [...sequences].sort((a, b) => a.text.length - b.text.length)) {
    const text = s.text.replace(/[\x00\n]/g, '');
    if (line.length + text.length > 59) break;
    line += text;
    tried.push(s);
  }
  return { line, tried };
}

/** How many lines of the last reply a resumed discussion's recap shows. */
const RECAP_REPLY_LINES = 6;

export function plantHostileFiles(sandbox: Sandbox, sequences: readonly HostileSequence[]): void {
  for (const s of sequences) fs.writeFileSync(path.join(sandbox.repo, asFileName(s)), `${s.id}\n`);
}

export async function driveHostileSession(options: {
  pty: boolean;
  fake: FakeOpenAI;
  sandbox: Sandbox;
  env: Record<string, string | undefined>;
  sequences: readonly HostileSequence[];
  clients: TerminalProcess[];
}): Promise<HostileRun> {
  const { pty, fake, sandbox, env, sequences } = options;
  const channels: ChannelOutput[] = [];
  const processes: string[] = [];
  const base = ['--storage-dir', sandbox.storage];
  const launch = (args: string[]) => {
    const client = pty ? TerminalProcess.startInPty([...base, ...args], { env, cwd: sandbox.repo }) : TerminalProcess.start([...base, ...args], { env, cwd: sandbox.repo });
    options.clients.push(client);
    return client;
  };
  const oneShot = async (channel: string, tried: readonly HostileSequence[], args: string[]) => {
    // Nothing reads stdin here; a pseudo-terminal's is left open, as a person's would be.
    const client = launch(args);
    if (!pty) client.endInput();
    await client.exited;
    channels.push({ channel, tried, output: client.stdout + client.stderr });
    processes.push(client.stdout + client.stderr);
    return client;
  };

  // A question whose first line (the discussion's title) carries sequences; the reply carries all of them.
  plantHostileFiles(sandbox, sequences);
  const title = titleOf(sequences);
  fake.push({ kind: 'text', deltas: splitDeltas(sequences) });
  const asked = await oneShot('ask: the reply', sequences, ['ask', `${title.line}\nWhat is this?`]);
  const listed = await runClient([...base, 'list', '--json'], { env, cwd: sandbox.repo });
  const discussionId = (JSON.parse(listed.stdout) as { saved: Array<{ discussionId: string }> }).saved[0]?.discussionId;
  if (!discussionId) throw new Error(`ask saved no discussion.\n${asked.transcript()}`);
  await oneShot('list: the title', title.tried, ['list']);

  // The interactive client, resuming it: the banner shows the title, the recap the question and reply.
  const client = launch(['--resume', discussionId]);
  const typed: string[] = [];
  let prompts = 0;
  let mark = { out: 0, err: 0 };
  const promptCount = () => countOf(stripAnsi(client.stdout), PROMPT);
  const take = (channel: string, tried: readonly HostileSequence[]) => {
    channels.push({ channel, tried, output: client.stdout.slice(mark.out) + client.stderr.slice(mark.err) });
    mark = { out: client.stdout.length, err: client.stderr.length };
  };
  const nextPrompt = async (also: (p: TerminalProcess) => boolean = () => true) => {
    prompts++;
    await client.until((p) => promptCount() >= prompts && also(p), `prompt ${prompts}`);
  };
  const type = async (line: string, channel: string, tried: readonly HostileSequence[], also?: (p: TerminalProcess) => boolean) => {
    typed.push(line);
    client.write(pty ? `${line}\r` : `${line}\n`);
    await nextPrompt(also);
    take(channel, tried);
  };
  await nextPrompt();
  take('resume: banner title and recap', [...new Set([...title.tried, ...sequences.slice(0, RECAP_REPLY_LINES)])]);

  const calls: FakeToolCall[] = sequences.flatMap((s, i) => [
    { id: `f${i}`, name: 'read_file', arguments: JSON.stringify({ path: asFileName(s) }) },
    { id: `n${i}`, name: 'read_file', arguments: JSON.stringify({ path: s.text }) },
    { id: `o${i}`, name: 'read_file', arguments: JSON.stringify({ path: `../${s.text}` }) },
    { id: `t${i}`, name: s.text, arguments: '{}' },
  ]);
  fake.push({ kind: 'toolCalls', calls }, { kind: 'text', text: 'Read them.' });
  await type('Read those files', 'tool calls, arguments, file names, refusals and failures', sequences);

  const intent = sequences.map((s) => s.text).join('\n');
  fake.push(
    { kind: 'toolCalls', calls: [{ id: 'p', name: 'prepare_coding_task', arguments: JSON.stringify({ intent, constraints: sequences.map((s) => s.text) }) }] },
    { kind: 'text', text: 'Prepared.' },
  );
  await type('Prepare the task', 'task card', sequences);
  await type('/promote stdout', 'task printed for the hand-off', sequences, (p) => p.stdout.includes('Recorded the hand-off.'));

  for (const s of sequences) {
    const step: FakeStep = { kind: 'error', status: 400, message: s.text, type: 'invalid_request_error' };
    fake.push(step);
    await type(`Provoke error ${s.id}`, "the endpoint's error message", [s], (p) => (pty ? p.stdout : p.stderr).includes(`[${s.id}]`));
  }

  fake.setModels(['fake-model', ...sequences.map((s) => s.text.replace(/[\x00\n]/g, ''))]);
  await type('/models', "the endpoint's model list", sequences);
  await type('/export', 'the discussion exported as Markdown', sequences, (p) => p.stdout.includes('## '));
  await type('/list', 'the saved list, interactive', title.tried);

  if (pty) client.write('\x04');
  else client.endInput();
  await client.exited;
  take('leaving', []);
  processes.push(client.stdout + client.stderr);

  fake.push({ kind: 'text', text: JSON.stringify({ proposed_intent: intent, constraints: sequences.map((s) => s.text) }) });
  await oneShot('promote: the task on stdout', sequences, ['promote', discussionId]);
  await oneShot('export: Markdown on stdout', sequences, ['export', discussionId]);
  await oneShot('usage error quoting the command line', title.tried, ['list', `--${title.line}`]);
  return { channels, typed, processes, discussionId };
}

/** The JSON outputs, each of which must parse back to the very strings that went in. */
export async function driveJsonOutputs(options: {
  fake: FakeOpenAI;
  sandbox: Sandbox;
  env: Record<string, string | undefined>;
  sequences: readonly HostileSequence[];
  discussionId: string;
}): Promise<Array<{ channel: string; output: string }>> {
  const { fake, sandbox, env, sequences, discussionId } = options;
  const base = ['--storage-dir', sandbox.storage];
  const run = (args: string[]) => runClient([...base, ...args], { env, cwd: sandbox.repo });
  const outputs: Array<{ channel: string; output: string }> = [];
  fake.push({ kind: 'text', deltas: splitDeltas(sequences) });
  outputs.push({ channel: 'ask --json', output: (await run(['ask', '--json', '--resume', discussionId, 'Once more'])).stdout });
  outputs.push({ channel: 'list --json', output: (await run(['list', '--json'])).stdout });
  const intent = sequences.map((s) => s.text).join('\n');
  fake.push({ kind: 'text', text: JSON.stringify({ proposed_intent: intent, constraints: sequences.map((s) => s.text) }) });
  outputs.push({ channel: 'promote --json', output: (await run(['promote', discussionId, '--json'])).stdout });
  outputs.push({ channel: 'export --json', output: (await run(['export', discussionId, '--json'])).stdout });
  return outputs;
}
