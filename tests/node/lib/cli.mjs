// Starts lib/cli-process.mjs (the Gemini CLI's IdeClient in a process of its
// own) the way a user's `gemini` would run, and talks to it.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const cliProcess = path.join(here, 'cli-process.mjs');
const hop = path.join(here, 'hop.mjs');

// Variables through which a CLI could find an IDE without the discovery file
// or recognise a terminal; a test sets the ones it means to use.
const IDE_VARIABLES = [
  'GEMINI_CLI_IDE_SERVER_PORT',
  'GEMINI_CLI_IDE_WORKSPACE_PATH',
  'GEMINI_CLI_IDE_AUTH_TOKEN',
  'GEMINI_CLI_IDE_PID',
  'GEMINI_CLI_IDE_SERVER_STDIO_COMMAND',
  'GEMINI_CLI_IDE_SERVER_STDIO_ARGS',
  'TERM_PROGRAM',
  'TERMINAL_EMULATOR',
  'ZED_SESSION_ID',
  'XCODE_VERSION_ACTUAL',
  'CURSOR_TRACE_ID',
  'ANTIGRAVITY_CLI_ALIAS',
  'CODESPACES',
  'REPLIT_USER',
];

/**
 * Runs a CLI client.
 *
 * launch is how it starts, which decides what the CLI's process walk finds:
 * - 'terminal': the test (playing the editor) runs a shell that runs the
 *   client, as an editor's terminal does: editor → bash → node.
 * - 'hop': an intermediate non-shell process runs that shell: the returned
 *   hopPid is then "the editor" whose terminal the client runs in.
 * - 'direct': the client is the test's direct child, with no shell above it.
 */
export async function startCli({ cwd, tmpDir, env = {}, launch = 'terminal' }) {
  const childEnv = { ...process.env };
  for (const name of IDE_VARIABLES) delete childEnv[name];
  Object.assign(childEnv, {
    TMPDIR: tmpDir,
    // On machines with /.dockerenv the CLI dials host.docker.internal
    // unless it believes it is reached over SSH.
    SSH_CONNECTION: '127.0.0.1 1 127.0.0.1 22',
    ...env,
  });
  // `node x; exit $?` keeps bash alive as the client's parent (a lone
  // command would be exec'd in place of the shell).
  const script = `"${process.execPath}" "${cliProcess}"; exit $?`;
  let command;
  let args;
  if (launch === 'direct') {
    command = process.execPath;
    args = [cliProcess];
  } else if (launch === 'terminal') {
    command = 'bash';
    args = ['-c', script];
  } else if (launch === 'hop') {
    command = process.execPath;
    args = [hop, 'bash', '-c', script];
  } else {
    throw new Error(`unknown launch ${launch}`);
  }
  const child = spawn(command, args, { cwd, env: childEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  const cli = new Cli(child, launch === 'hop' ? child.pid : undefined);
  await cli.ready;
  return cli;
}

/** A running CLI client process. */
export class Cli {
  stderr = '';
  #child;
  #nextId = 1;
  #pending = new Map();

  constructor(child, hopPid) {
    this.#child = child;
    this.hopPid = hopPid;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      this.stderr += d;
    });
    child.stdin.on('error', () => {});
    let markReady;
    let failReady;
    this.ready = new Promise((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    child.on('exit', (code) => {
      failReady(new Error(`the CLI client exited (${code}) before it was ready:\n${this.stderr}`));
      for (const p of this.#pending.values()) {
        p.reject(new Error(`the CLI client exited (${code}):\n${this.stderr}`));
      }
      this.#pending.clear();
    });
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        this.stderr += `[stdout] ${line}\n`;
        return;
      }
      if (msg.ready) {
        markReady();
        return;
      }
      const p = this.#pending.get(msg.id);
      if (!p) return;
      this.#pending.delete(msg.id);
      if (msg.error !== undefined) p.reject(new Error(`CLI client ${p.op}: ${msg.error}`));
      else p.resolve(msg.result);
    });
  }

  /** Runs op in the client process and resolves with its result. */
  call(op, args = {}, timeoutMs = 20_000) {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`CLI client ${op} took over ${timeoutMs} ms; its stderr:\n${this.stderr}`));
      }, timeoutMs);
      this.#pending.set(id, {
        op,
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.#child.stdin.write(JSON.stringify({ id, op, args }) + '\n');
    });
  }

  /** Kills the client process at once, as a crash or `kill -9` would. */
  async kill() {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise((r) => this.#child.once('exit', r));
    this.#child.kill('SIGKILL');
    await exited;
  }

  /** Ends the client process. */
  async close() {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    const exited = new Promise((r) => this.#child.once('exit', r));
    this.#child.stdin.end();
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}
