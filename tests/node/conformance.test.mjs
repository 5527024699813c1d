// Conformance of the sidecar with the real Gemini CLI's IDE client.
//
// Each test plays an editor over the real sidecar's stdin/stdout (the editor
// link), and runs the CLI's own IdeClient (from @google/gemini-cli-core, the
// code `gemini` runs) in a separate process started like a user's terminal
// would start it, so that discovery goes through the real discovery file, the
// real process walk and the real MCP transport.
//
// Run: `npm ci && node --test` in tests/node (GIC_BINARY selects a built
// sidecar; otherwise it is built with `go build`).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Editor, pollUntil } from './lib/editor.mjs';
import { startCli } from './lib/cli.mjs';
import { defer, options } from './lib/harness.mjs';

/** A fresh workspace and TMPDIR, removed when the test ends. */
function sandbox(t) {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'gic-conformance-')));
  const tmpDir = path.join(root, 'tmp');
  const ws = path.join(root, 'workspace');
  mkdirSync(tmpDir, { mode: 0o700 });
  mkdirSync(path.join(ws, 'src'), { recursive: true });
  defer(t, () => rmSync(root, { recursive: true, force: true }));
  return { root, tmpDir, ws };
}

/** Starts a sidecar for ws and initializes it as displayName. */
async function startEditor(t, { tmpDir, ws, displayName, processId = process.pid }) {
  const editor = Editor.start({ env: { TMPDIR: tmpDir } });
  defer(t, () => editor.shutdown());
  const init = await editor.initialize({
    ide: { name: displayName.toLowerCase().replace(/\W+/g, '-'), displayName },
    processId,
    workspaceFolders: [ws],
  });
  return { editor, init };
}

async function cli(t, opts) {
  const c = await startCli(opts);
  defer(t, () => c.close());
  return c;
}

/** The workspaceState of the context the CLI holds, or undefined. */
async function contextOf(c) {
  const ctx = await c.call('context');
  return ctx?.workspaceState ?? undefined;
}

async function waitContext(c, what, pred) {
  return pollUntil(what, async () => {
    const state = await contextOf(c);
    return state && pred(state) ? state : false;
  });
}

async function waitOutcome(c, key, timeoutMs = 10_000) {
  const entry = await pollUntil(`openDiff ${key} to settle`, async () => {
    const e = await c.call('diffOutcome', { key });
    return e.settled ? e : false;
  }, timeoutMs);
  assert.equal(entry.error, undefined, `openDiff ${key} failed: ${entry.error}`);
  return entry.value;
}

/** How many diff/open (or diff/close) requests the editor got for filePath. */
function countRequests(editor, method, filePath) {
  return editor.requests.filter((r) => r.method === method && r.params?.filePath === filePath).length;
}

async function waitNthRequest(editor, method, filePath, n) {
  await pollUntil(`${method} #${n} for ${filePath}`, () => countRequests(editor, method, filePath) >= n);
  return editor.requests.filter((r) => r.method === method && r.params?.filePath === filePath)[n - 1].params;
}

test('the CLI finds the sidecar by its discovery file, sees the editor, and gets the user\'s diff decisions', options, async (t) => {
  const { tmpDir, ws } = sandbox(t);
  const fileA = path.join(ws, 'src', 'a.txt');
  const fileB = path.join(ws, 'b.txt');
  const fileNew = path.join(ws, 'src', 'new.txt');
  writeFileSync(fileA, 'alpha\n');
  writeFileSync(fileB, 'bravo\n');

  const { editor, init } = await startEditor(t, { tmpDir, ws, displayName: 'Conformance Editor' });

  // What initialize promises, and the file the CLI will read.
  const expectedIdePid = process.ppid > 1 ? process.ppid : process.pid;
  assert.ok(Number.isInteger(init.port) && init.port > 0, `port ${init.port}`);
  assert.ok(typeof init.authToken === 'string' && init.authToken.length >= 16, 'a real auth token');
  assert.equal(init.idePid, expectedIdePid, 'IDE PID = parent of the editor process, as the CLI walk computes it');
  assert.equal(init.discoveryFile,
    path.join(tmpDir, 'gemini', 'ide', `gemini-ide-server-${init.idePid}-${init.port}.json`));
  const file = JSON.parse(readFileSync(init.discoveryFile, 'utf8'));
  assert.equal(file.port, init.port);
  assert.equal(file.workspacePath, ws);
  assert.equal(file.authToken, init.authToken);
  assert.deepEqual(file.ideInfo, { name: 'conformance-editor', displayName: 'Conformance Editor' });
  assert.equal(init.env.GEMINI_CLI_IDE_SERVER_PORT, String(init.port));
  assert.equal(init.env.GEMINI_CLI_IDE_WORKSPACE_PATH, ws);

  // The user already has a file open when they start the CLI.
  editor.notify('context/fileFocused', { path: fileA, cursor: { line: 2, character: 3 } });

  // The CLI runs in a terminal of the editor, in a subfolder of the
  // workspace, with no GEMINI_CLI_IDE_* variables: only the file leads it.
  const c = await cli(t, { cwd: path.join(ws, 'src'), tmpDir, launch: 'terminal' });
  const walked = await c.call('processInfo');
  assert.equal(walked.pid, init.idePid,
    'the CLI\'s own process walk must land on the PID the discovery file is named with');

  const state = await c.call('connect');
  assert.equal(state.status, 'connected', `not connected: ${state.details}\nsidecar stderr:\n${editor.stderr}`);
  assert.equal(state.diffing, true, 'isDiffingEnabled(): openDiff and closeDiff must both be listed');
  assert.equal(state.displayName, 'Conformance Editor');
  await editor.waitNotification('status', (p) => p.connectedClients === 1);

  // The context the editor had before the CLI connected arrives on its own.
  await waitContext(c, 'the already-open file on connect', (s) =>
    s.openFiles?.[0]?.path === fileA && s.openFiles[0].isActive === true &&
    s.openFiles[0].cursor?.line === 2 && s.openFiles[0].cursor?.character === 3);

  // Cursor and selection follow the user.
  editor.notify('context/selectionChanged', {
    path: fileA, cursor: { line: 4, character: 1 }, selectedText: 'selected words',
  });
  await waitContext(c, 'the selection', (s) =>
    s.openFiles[0].path === fileA && s.openFiles[0].selectedText === 'selected words' &&
    s.openFiles[0].cursor?.line === 4 && s.openFiles[0].cursor?.character === 1);

  // A second file takes focus; the first stays open, inactive.
  editor.notify('context/fileFocused', { path: fileB, cursor: { line: 1, character: 1 } });
  const two = await waitContext(c, 'b.txt active, a.txt behind it', (s) =>
    s.openFiles.length === 2 && s.openFiles[0].path === fileB && s.openFiles[0].isActive === true);
  assert.equal(two.openFiles[1].path, fileA);
  assert.notEqual(two.openFiles[1].isActive, true);
  assert.ok(two.openFiles[0].timestamp >= two.openFiles[1].timestamp, 'timestamps order the files');
  assert.equal(two.isTrusted, true);

  editor.notify('context/fileClosed', { path: fileB });
  await waitContext(c, 'b.txt gone after close', (s) =>
    s.openFiles.length === 1 && s.openFiles[0].path === fileA);

  // Trust changes reach the CLI's trust listeners.
  editor.notify('workspace/trustChanged', { isTrusted: false });
  await pollUntil('isTrusted=false at the CLI', async () =>
    (await c.call('trustEvents')).includes(false) && (await contextOf(c))?.isTrusted === false);
  editor.notify('workspace/trustChanged', { isTrusted: true });
  await waitContext(c, 'isTrusted=true again', (s) => s.isTrusted === true);

  // openDiff → the user edits the proposal in the editor and accepts it.
  await c.call('startDiff', { key: 'accept', filePath: fileA, newContent: 'alpha\nbeta\n' });
  const opened = await waitNthRequest(editor, 'diff/open', fileA, 1);
  assert.equal(opened.newContent, 'alpha\nbeta\n');
  assert.equal(opened.originalContent, 'alpha\n');
  assert.match(opened.unifiedDiff, /^\+beta$/m);
  assert.equal(typeof opened.title, 'string');
  editor.views.get(fileA).content = 'alpha\nbeta\ngamma, typed by the user\n';
  editor.accept(fileA);
  assert.deepEqual(await waitOutcome(c, 'accept'),
    { status: 'accepted', content: 'alpha\nbeta\ngamma, typed by the user\n' });
  assert.equal(readFileSync(fileA, 'utf8'), 'alpha\n', 'the CLI writes the file, not the sidecar');

  // openDiff → the user rejects it in the editor.
  await c.call('startDiff', { key: 'reject', filePath: fileB, newContent: 'bravo\nchanged\n' });
  await waitNthRequest(editor, 'diff/open', fileB, 1);
  editor.reject(fileB);
  assert.deepEqual(await waitOutcome(c, 'reject'), { status: 'rejected' });

  // A diff for a file that does not exist yet.
  await c.call('startDiff', { key: 'new', filePath: fileNew, newContent: 'brand new\n' });
  const openedNew = await waitNthRequest(editor, 'diff/open', fileNew, 1);
  assert.equal(openedNew.originalContent, null, 'originalContent is null for a new file');
  editor.accept(fileNew);
  assert.deepEqual(await waitOutcome(c, 'new'), { status: 'accepted', content: 'brand new\n' });
  assert.equal(existsSync(fileNew), false);

  // The user answers in the terminal instead: the CLI closes the diff and
  // takes the editor's current proposal text.
  await c.call('startDiff', { key: 'cli-accept', filePath: fileA, newContent: 'from the model\n' });
  await waitNthRequest(editor, 'diff/open', fileA, 2);
  editor.views.get(fileA).content = 'from the model\nedited in the editor\n';
  await c.call('resolveDiffFromCli', { filePath: fileA, outcome: 'accepted' });
  await waitNthRequest(editor, 'diff/close', fileA, 1);
  assert.deepEqual(await waitOutcome(c, 'cli-accept'),
    { status: 'accepted', content: 'from the model\nedited in the editor\n' });

  // A decision the editor sends for the view after it was closed must not
  // reach the CLI. The selection change after it is a barrier: it passes
  // through the sidecar after the stale decision would have.
  editor.notify('diff/accepted', { filePath: fileA, content: 'stale decision' });
  editor.notify('diff/rejected', { filePath: fileA });
  editor.notify('context/selectionChanged', { path: fileA, cursor: { line: 1, character: 1 }, selectedText: 'barrier' });
  await waitContext(c, 'the barrier selection', (s) => s.openFiles[0].selectedText === 'barrier');
  const accepted = await c.call('received', { method: 'ide/diffAccepted' });
  const rejected = await c.call('received', { method: 'ide/diffRejected' });
  assert.deepEqual(accepted.map((n) => n.params), [
    { filePath: fileA, content: 'alpha\nbeta\ngamma, typed by the user\n' },
    { filePath: fileNew, content: 'brand new\n' },
  ], 'exactly the two editor acceptances reached the CLI');
  assert.deepEqual(rejected.map((n) => n.params), [{ filePath: fileB }],
    'exactly the one editor rejection reached the CLI');
  assert.deepEqual(await c.call('received', { method: 'ide/diffClosed' }), []);

  // Rejected from the terminal.
  await c.call('startDiff', { key: 'cli-reject', filePath: fileB, newContent: 'nope\n' });
  await waitNthRequest(editor, 'diff/open', fileB, 2);
  await c.call('resolveDiffFromCli', { filePath: fileB, outcome: 'rejected' });
  await waitNthRequest(editor, 'diff/close', fileB, 1);
  assert.deepEqual(await waitOutcome(c, 'cli-reject'), { status: 'rejected' });
  assert.equal(editor.views.size, 0, 'every view the sidecar opened was closed');

  // closeDiff for a file with no diff is harmless.
  assert.equal(await c.call('closeDiff', { filePath: path.join(ws, 'never-opened.txt') }), null);
  assert.equal((await c.call('state')).status, 'connected');

  // The CLI leaves while a diff is open: it closes the diff on its way out.
  // It sends no DELETE for its MCP session (its SDK only aborts the GET
  // stream), so the sidecar must notice the stream closing to tell the
  // editor the CLI is gone.
  await c.call('startDiff', { key: 'left-open', filePath: fileA, newContent: 'abandoned\n' });
  await waitNthRequest(editor, 'diff/open', fileA, 3);
  assert.equal((await c.call('disconnect')).status, 'disconnected');
  await waitNthRequest(editor, 'diff/close', fileA, 2);
  await editor.waitNotification('status', (p) => p.connectedClients === 0);

  assert.deepEqual(editor.garbage, [], 'the sidecar wrote only JSON-RPC on stdout');
  const { code } = await editor.shutdown();
  assert.equal(code, 0);
  assert.equal(existsSync(init.discoveryFile), false, 'shutdown removes the discovery file');
});

test('with two editor windows on one workspace, each terminal\'s CLI reaches its own window', options, async (t) => {
  const { tmpDir, ws } = sandbox(t);

  // Window A is this process; window B is a separate (non-shell) process
  // that runs its own terminal.
  const { editor: editorA, init: initA } = await startEditor(t, { tmpDir, ws, displayName: 'Window A' });
  const cliB = await cli(t, { cwd: ws, tmpDir, launch: 'hop' });
  const { editor: editorB, init: initB } = await startEditor(t, {
    tmpDir, ws, displayName: 'Window B', processId: cliB.hopPid,
  });
  assert.equal(initB.idePid, process.pid);
  assert.notEqual(initA.idePid, initB.idePid);

  const cliA = await cli(t, { cwd: ws, tmpDir, launch: 'terminal' });
  assert.equal((await cliA.call('processInfo')).pid, initA.idePid);
  assert.equal((await cliB.call('processInfo')).pid, initB.idePid);

  const stateA = await cliA.call('connect');
  const stateB = await cliB.call('connect');
  assert.equal(stateA.status, 'connected', stateA.details);
  assert.equal(stateB.status, 'connected', stateB.details);
  assert.equal(stateA.displayName, 'Window A');
  assert.equal(stateB.displayName, 'Window B');

  // And they really talk to their own sidecar: each editor's focus reaches
  // only its own CLI.
  const fileA = path.join(ws, 'in-a.txt');
  const fileB = path.join(ws, 'in-b.txt');
  writeFileSync(fileA, 'a\n');
  writeFileSync(fileB, 'b\n');
  editorA.notify('context/fileFocused', { path: fileA });
  editorB.notify('context/fileFocused', { path: fileB });
  await waitContext(cliA, 'window A\'s file at CLI A', (s) => s.openFiles?.[0]?.path === fileA);
  await waitContext(cliB, 'window B\'s file at CLI B', (s) => s.openFiles?.[0]?.path === fileB);
  assert.ok((await contextOf(cliA)).openFiles.every((f) => f.path !== fileB));
  await editorA.waitNotification('status', (p) => p.connectedClients === 1);
  await editorB.waitNotification('status', (p) => p.connectedClients === 1);

  // The env a plugin puts in its terminals wins over the process tree: a
  // terminal of window A that carries window B's port reaches window B.
  const cliPort = await cli(t, {
    cwd: ws, tmpDir, launch: 'terminal',
    env: { GEMINI_CLI_IDE_SERVER_PORT: initB.env.GEMINI_CLI_IDE_SERVER_PORT },
  });
  const statePort = await cliPort.call('connect');
  assert.equal(statePort.displayName, 'Window B');
  assert.equal(statePort.status, 'connected', statePort.details);

  // A CLI with no shell above it (started by a tool, not a terminal) cannot
  // walk to an editor; GEMINI_CLI_IDE_PID from the env picks the window.
  const cliDirect = await cli(t, {
    cwd: ws, tmpDir, launch: 'direct',
    env: { GEMINI_CLI_IDE_PID: initB.env.GEMINI_CLI_IDE_PID },
  });
  assert.equal((await cliDirect.call('processInfo')).pid, initB.idePid);
  const stateDirect = await cliDirect.call('connect');
  assert.equal(stateDirect.status, 'connected', stateDirect.details);
  assert.equal(stateDirect.displayName, 'Window B');
});

test('the ideInfo in the discovery file is what lets a plain terminal through', options, async (t) => {
  const { root, tmpDir, ws } = sandbox(t);
  const { init } = await startEditor(t, { tmpDir, ws, displayName: 'Info Editor' });
  const original = JSON.parse(readFileSync(init.discoveryFile, 'utf8'));

  // The same file in two other TMPDIRs: one as the sidecar wrote it, one
  // without ideInfo.
  const copyTo = (name, content) => {
    const dir = path.join(root, name, 'gemini', 'ide');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(path.join(dir, path.basename(init.discoveryFile)), JSON.stringify(content));
    return path.join(root, name);
  };
  const withInfo = copyTo('with-info', original);
  const { ideInfo: _dropped, ...rest } = original;
  const withoutInfo = copyTo('without-info', rest);

  const good = await cli(t, { cwd: ws, tmpDir: withInfo, launch: 'terminal' });
  const goodState = await good.call('connect');
  assert.equal(goodState.status, 'connected', goodState.details);
  assert.equal(goodState.displayName, 'Info Editor');

  // Without ideInfo the CLI does not recognise the editor (this is what
  // `/ide status` reports as "not supported in your current environment").
  const bad = await cli(t, { cwd: ws, tmpDir: withoutInfo, launch: 'terminal' });
  const badState = await bad.call('connect');
  assert.equal(badState.status, 'disconnected');
  assert.equal(badState.ideName, null);
  assert.equal(badState.displayName, null);

  // And a CLI started outside the workspace is told so.
  const outside = await cli(t, { cwd: root, tmpDir, launch: 'terminal' });
  const outsideState = await outside.call('connect');
  assert.equal(outsideState.status, 'disconnected');
  assert.match(outsideState.details, /Directory mismatch/);
});
