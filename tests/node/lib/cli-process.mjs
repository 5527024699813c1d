// The Gemini CLI's side of a conformance test, run as its own process: the
// CLI's IdeClient is a per-process singleton that discovers the IDE from its
// own cwd, environment and process tree, so each client gets a process of its
// own, started where a user's `gemini` would run.
//
// It takes one JSON command per line on stdin ({id, op, args}) and writes one
// JSON answer per line on stdout ({id, result} or {id, error}). Everything
// the CLI's code logs goes to stderr.

import { createInterface } from 'node:readline';

// The CLI's debug logger writes to console.debug/log, which is stdout.
for (const name of ['log', 'debug', 'info']) {
  console[name] = (...args) => console.error(...args);
}

const { IdeClient } = await import('@google/gemini-cli-core/dist/src/ide/ide-client.js');
const { ideContextStore } = await import('@google/gemini-cli-core/dist/src/ide/ideContext.js');
const { getIdeProcessInfo } = await import('@google/gemini-cli-core/dist/src/ide/process-utils.js');

let ide;
/** Every message the CLI's MCP client received from the sidecar. */
const received = [];
const trustEvents = [];
const diffs = new Map();

function stateOf(client) {
  const state = client.getConnectionStatus();
  return {
    status: state.status,
    details: state.details ?? null,
    diffing: client.isDiffingEnabled(),
    displayName: client.getDetectedIdeDisplayName() ?? null,
    ideName: client.getCurrentIde()?.name ?? null,
  };
}

const ops = {
  async processInfo() {
    return getIdeProcessInfo();
  },
  async connect() {
    ide = await IdeClient.getInstance();
    ide.addTrustChangeListener((trusted) => trustEvents.push(trusted));
    await ide.connect({ logToConsole: false });
    // Watch the wire as well, so a test can prove that something did NOT
    // arrive (a decision after closeDiff).
    const transport = ide.client?.transport;
    if (transport && typeof transport.onmessage === 'function') {
      const deliver = transport.onmessage;
      transport.onmessage = (message, extra) => {
        if (message && typeof message.method === 'string' && message.id === undefined) {
          received.push({ method: message.method, params: message.params ?? null });
        }
        return deliver(message, extra);
      };
    }
    return stateOf(ide);
  },
  async state() {
    return stateOf(ide ?? (await IdeClient.getInstance()));
  },
  async context() {
    return ideContextStore.get() ?? null;
  },
  async received({ method }) {
    return received.filter((n) => n.method === method);
  },
  async trustEvents() {
    return trustEvents;
  },
  // Starts openDiff and returns at once; diffOutcome tells how it ended.
  async startDiff({ key, filePath, newContent }) {
    const entry = { settled: false };
    diffs.set(key, entry);
    ide.openDiff(filePath, newContent).then(
      (value) => Object.assign(entry, { settled: true, value }),
      (err) => Object.assign(entry, { settled: true, error: String(err?.message ?? err) }),
    );
    return true;
  },
  async diffOutcome({ key }) {
    const entry = diffs.get(key);
    if (!entry) throw new Error(`no diff started under ${key}`);
    return entry;
  },
  async resolveDiffFromCli({ filePath, outcome }) {
    await ide.resolveDiffFromCli(filePath, outcome);
    return true;
  },
  async closeDiff({ filePath }) {
    return (await ide.closeDiff(filePath)) ?? null;
  },
  async disconnect() {
    await ide.disconnect();
    return stateOf(ide);
  },
};

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', async (line) => {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch {
    return;
  }
  const answer = { id: cmd.id };
  try {
    const op = ops[cmd.op];
    if (!op) throw new Error(`unknown op ${cmd.op}`);
    answer.result = (await op(cmd.args ?? {})) ?? null;
  } catch (err) {
    answer.error = String(err?.stack ?? err);
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
});
lines.on('close', () => process.exit(0));
process.stdout.write(JSON.stringify({ ready: true }) + '\n');
