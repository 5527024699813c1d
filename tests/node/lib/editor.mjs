// A simulated editor: it starts the real sidecar with --stdio and speaks the
// editor link (docs/editor-link.md) to it over the child's stdin and stdout,
// the way every editor plugin does. It keeps a table of open diff views, so
// that it answers diff/open and diff/close as an editor would, and lets a
// test play the user (edit a view, accept, reject).

import { spawn, execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository root (tests/node/lib/../../..). */
export const repoRoot = path.resolve(here, '..', '..', '..');

let builtBinary;

/**
 * Returns the sidecar binary to test: $GIC_BINARY when set, else one built
 * once per test process from this checkout with `go build`.
 */
export function sidecarBinary() {
  const fromEnv = process.env.GIC_BINARY;
  if (fromEnv) {
    if (!existsSync(fromEnv)) {
      throw new Error(`GIC_BINARY=${fromEnv} does not exist`);
    }
    return fromEnv;
  }
  if (!builtBinary) {
    const dir = mkdtempSync(path.join(tmpdir(), 'gic-bin-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    const out = path.join(dir, 'gemini-ide-companion');
    try {
      execFileSync('go', ['build', '-o', out, './cmd/gemini-ide-companion'], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      throw new Error(
        `building the sidecar failed (set GIC_BINARY to use a built one): ${err.stderr ?? err.message}`,
      );
    }
    builtBinary = out;
  }
  return builtBinary;
}

/** Polls fn until it returns a truthy value and returns that value. */
export async function pollUntil(what, fn, timeoutMs = 10_000, intervalMs = 25) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${detail})`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** An error the sidecar returned to one of our requests. */
export class RpcError extends Error {
  constructor(method, error) {
    super(`${method}: ${error.message} (code ${error.code})`);
    this.code = error.code;
    this.rpcMessage = error.message;
  }
}

/**
 * One editor with its sidecar. Create with Editor.start().
 */
export class Editor {
  /** Diff views the sidecar opened and not yet closed, by file path. */
  views = new Map();
  /** Every request the sidecar sent us, in order: {method, params}. */
  requests = [];
  /** Every notification the sidecar sent us, in order: {method, params}. */
  notifications = [];
  /** Raw protocol lines the sidecar wrote that were not JSON-RPC. */
  garbage = [];
  stderr = '';

  #child;
  #nextId = 1;
  #pending = new Map();
  #exited;

  /**
   * Starts `gemini-ide-companion --stdio` with env (merged over
   * process.env) and returns the editor attached to it.
   */
  static start({ env = {}, args = [] } = {}) {
    const editor = new Editor();
    const child = spawn(sidecarBinary(), ['--stdio', '--log-level', 'debug', ...args], {
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    editor.#child = child;
    editor.#exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d) => {
      editor.stderr += d;
    });
    // Writes to a sidecar that died fail asynchronously; the test sees the
    // death through exited(), not through an unhandled error.
    child.stdin.on('error', () => {});
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => editor.#onLine(line));
    return editor;
  }

  get pid() {
    return this.#child.pid;
  }

  /** Resolves with {code, signal} when the sidecar exits. */
  exited() {
    return this.#exited;
  }

  #send(msg) {
    this.#child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');
  }

  /** Sends a request and resolves with its result (rejects with RpcError). */
  request(method, params, timeoutMs = 10_000) {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`no answer to ${method} within ${timeoutMs} ms; sidecar stderr:\n${this.stderr}`));
      }, timeoutMs);
      this.#pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(new RpcError(method, e));
        },
      });
      this.#send({ id, method, params });
    });
  }

  /** Sends a notification. */
  notify(method, params) {
    this.#send({ method, params });
  }

  /** initialize with sensible defaults; overrides are merged in. */
  initialize(overrides = {}) {
    return this.request('initialize', {
      protocolVersion: 1,
      ide: { name: 'conformance-editor', displayName: 'Conformance Editor' },
      processId: process.pid,
      workspaceFolders: [],
      isTrusted: true,
      ...overrides,
    });
  }

  /** Waits for a request from the sidecar matching pred and returns it. */
  async waitRequest(method, pred = () => true, timeoutMs = 10_000) {
    try {
      return await pollUntil(`${method} from the sidecar`, () =>
        this.requests.find((r) => r.method === method && pred(r.params)), timeoutMs);
    } catch (err) {
      throw this.#explain(err, this.requests, method);
    }
  }

  /** Waits for a notification from the sidecar matching pred. */
  async waitNotification(method, pred = () => true, timeoutMs = 10_000) {
    try {
      return await pollUntil(`${method} notification from the sidecar`, () =>
        this.notifications.find((n) => n.method === method && pred(n.params)), timeoutMs);
    } catch (err) {
      throw this.#explain(err, this.notifications, method);
    }
  }

  // Adds what did arrive, and the sidecar's log, to a timeout.
  #explain(err, list, method) {
    const got = list.filter((m) => m.method === method).map((m) => JSON.stringify(m.params));
    return new Error(`${err.message}\nreceived ${method}: [${got.join(', ')}]\nsidecar stderr (last 4 KiB):\n${this.stderr.slice(-4096)}`);
  }

  /** The user accepts the view for filePath, with its current content. */
  accept(filePath) {
    const view = this.views.get(filePath);
    if (!view) throw new Error(`no diff view open for ${filePath}`);
    this.views.delete(filePath);
    this.notify('diff/accepted', { filePath, content: view.content });
  }

  /** The user rejects (closes) the view for filePath. */
  reject(filePath) {
    if (!this.views.delete(filePath)) throw new Error(`no diff view open for ${filePath}`);
    this.notify('diff/rejected', { filePath });
  }

  /** Asks the sidecar to shut down and waits for it to exit. */
  async shutdown() {
    if (this.#child.exitCode !== null || this.#child.signalCode !== null) return this.#exited;
    try {
      await this.request('shutdown', null, 5_000);
    } catch {
      // Fall through to closing stdin, which means the same.
    }
    this.#child.stdin.end();
    const timer = setTimeout(() => this.#child.kill('SIGKILL'), 5_000);
    const result = await this.#exited;
    clearTimeout(timer);
    return result;
  }

  #onLine(line) {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      this.garbage.push(line);
      return;
    }
    if (msg.method !== undefined && msg.id !== undefined && msg.id !== null) {
      this.requests.push({ method: msg.method, params: msg.params });
      this.#answer(msg);
    } else if (msg.method !== undefined) {
      this.notifications.push({ method: msg.method, params: msg.params });
    } else if (this.#pending.has(msg.id)) {
      const p = this.#pending.get(msg.id);
      this.#pending.delete(msg.id);
      if (msg.error) p.reject(msg.error);
      else p.resolve(msg.result);
    } else {
      this.garbage.push(line);
    }
  }

  // Answers the sidecar's requests as an editor does.
  #answer(msg) {
    const { id, method, params } = msg;
    const reply = (result) => this.#send({ id, result });
    const fail = (code, message) => this.#send({ id, error: { code, message } });
    switch (method) {
      case 'diff/open':
        if (!params || typeof params.filePath !== 'string' || typeof params.newContent !== 'string') {
          fail(-32602, 'diff/open needs filePath and newContent');
          return;
        }
        this.views.set(params.filePath, { content: params.newContent, opened: params });
        reply({});
        return;
      case 'diff/close': {
        const view = this.views.get(params?.filePath);
        this.views.delete(params?.filePath);
        reply({ content: view ? view.content : null });
        return;
      }
      default:
        fail(-32601, `the test editor does not handle ${method}`);
    }
  }
}
