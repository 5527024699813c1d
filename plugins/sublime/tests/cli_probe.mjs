// Runs Gemini CLI's own IDE client (IdeClient from @google/gemini-cli-core)
// the way `gemini` runs it in a terminal, for test_real_cli.py.
//
// GEMINI_CLI_CORE_DIR: the installed @google/gemini-cli-core package.
// Writes one JSON object per line on stdout:
//   {"event": "connected", "status", "details", "displayName", "diffing"}
//   {"event": "context", "context"}            on every ide/contextUpdate
//   {"event": "diff", "result"}                 when an openDiff settles
//   {"event": "error", "message"}
// Reads one JSON command per line on stdin:
//   {"cmd": "openDiff", "filePath", "newContent"}   {"cmd": "quit"}

import { createInterface } from 'node:readline';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

// The CLI's code logs with console.log/debug; keep stdout for the protocol.
for (const name of ['log', 'debug', 'info', 'warn']) {
  console[name] = (...args) => process.stderr.write(args.join(' ') + '\n');
}

const coreDir = process.env.GEMINI_CLI_CORE_DIR;
const load = (rel) => import(pathToFileURL(path.join(coreDir, rel)).href);
const { IdeClient } = await load('dist/src/ide/ide-client.js');
const { ideContextStore } = await load('dist/src/ide/ideContext.js');

ideContextStore.subscribe((context) => out({ event: 'context', context }));

const ide = await IdeClient.getInstance();
await ide.connect({ logToConsole: false });
const state = ide.getConnectionStatus();
out({
  event: 'connected',
  status: state.status,
  details: state.details ?? null,
  displayName: ide.getDetectedIdeDisplayName() ?? null,
  diffing: ide.isDiffingEnabled(),
});

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (err) {
    out({ event: 'error', message: `bad command: ${line}` });
    continue;
  }
  if (cmd.cmd === 'openDiff') {
    ide.openDiff(cmd.filePath, cmd.newContent).then(
      (result) => out({ event: 'diff', result }),
      (err) => out({ event: 'error', message: String(err?.message ?? err) }),
    );
  } else if (cmd.cmd === 'quit') {
    break;
  }
}
await ide.disconnect();
process.exit(0);
