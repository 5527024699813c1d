// Every proposal has an owner: two real IdeClient sessions (from the pinned
// @google/gemini-cli-core, in separate processes started like terminals)
// against the real sidecar, with an editor that shows diff/state.
//
// The CLI matches decisions by file path alone, so a decision delivered to a
// session that did not make the proposal resolves its own wait with text its
// model never proposed. These tests prove each decision reaches only its
// owner.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { Editor, pollUntil } from './lib/editor.mjs';
import { startCli } from './lib/cli.mjs';
import { defer, options } from './lib/harness.mjs';

/** A sidecar with an editor that shows diff/state, and two connected CLIs. */
async function twoClis(t) {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'gic-owners-')));
  const tmpDir = path.join(root, 'tmp');
  const ws = path.join(root, 'workspace');
  mkdirSync(tmpDir, { mode: 0o700 });
  mkdirSync(ws, { recursive: true });
  defer(t, () => rmSync(root, { recursive: true, force: true }));
  const editor = Editor.start({ env: { TMPDIR: tmpDir } });
  defer(t, () => editor.shutdown());
  await editor.initialize({ workspaceFolders: [ws], capabilities: { diffStates: true } });
  const clis = [];
  for (let i = 0; i < 2; i++) {
    const c = await startCli({ cwd: ws, tmpDir, launch: 'terminal' });
    defer(t, () => c.close());
    const state = await c.call('connect');
    assert.equal(state.status, 'connected', `CLI ${i} not connected: ${state.details}\n${editor.stderr}`);
    clis.push(c);
  }
  await editor.waitNotification('status', (p) => p.connectedClients === 2);
  return { editor, ws, root, a: clis[0], b: clis[1] };
}

async function outcome(c, key) {
  return (await c.call('diffOutcome', { key }));
}

async function settled(c, key, timeoutMs = 10_000) {
  const e = await pollUntil(`openDiff ${key} to settle`, async () => {
    const o = await outcome(c, key);
    return o.settled ? o : false;
  }, timeoutMs);
  assert.equal(e.error, undefined, `openDiff ${key} failed: ${e.error}`);
  return e.value;
}

function opensFor(editor, filePath) {
  return editor.requests.filter((r) => r.method === 'diff/open' && r.params.filePath === filePath).map((r) => r.params);
}

/** A context change both CLIs must see: everything sent before it has arrived. */
async function barrier(editor, clis, file, text) {
  editor.notify('context/selectionChanged', { path: file, cursor: { line: 1, character: 1 }, selectedText: text });
  for (const c of clis) {
    await pollUntil(`barrier ${text}`, async () =>
      (await c.call('context'))?.workspaceState?.openFiles?.[0]?.selectedText === text);
  }
}

test('two CLIs propose an edit to the same file: the second waits, each hears only its own decision', options, async (t) => {
  const { editor, ws, a, b } = await twoClis(t);
  const file = path.join(ws, 'shared.txt');
  writeFileSync(file, 'original\n');

  await a.call('startDiff', { key: 'a', filePath: file, newContent: 'from A\n' });
  await pollUntil('A\'s diff shown', () => opensFor(editor, file).length === 1);
  await b.call('startDiff', { key: 'b', filePath: file, newContent: 'from B\n' });
  const queued = await editor.waitNotification('diff/state', (p) => p.state === 'queued' && p.filePath === file);
  assert.match(queued.params.message, /Another Gemini CLI session/);
  assert.equal(opensFor(editor, file).length, 1, 'B\'s proposal must not replace A\'s on screen');
  assert.equal(editor.views.get(file).content, 'from A\n');

  // The user accepts what they see (A's proposal, edited).
  editor.views.get(file).content = 'from A, edited\n';
  editor.accept(file);
  assert.deepEqual(await settled(a, 'a'), { status: 'accepted', content: 'from A, edited\n' });
  // B's wait was not resolved by A's decision...
  assert.equal((await outcome(b, 'b')).settled, false, 'B took A\'s decision as its own');
  // ...and B's proposal is shown next, as a distinct diff.
  await pollUntil('B\'s diff shown', () => opensFor(editor, file).length === 2);
  const [first, second] = opensFor(editor, file);
  assert.equal(second.newContent, 'from B\n');
  assert.notEqual(second.diffId, first.diffId);
  assert.notEqual(second.owner, first.owner);
  editor.reject(file);
  assert.deepEqual(await settled(b, 'b'), { status: 'rejected' });

  await barrier(editor, [a, b], file, 'after both');
  const aGot = [...await a.call('received', { method: 'ide/diffAccepted' }), ...await a.call('received', { method: 'ide/diffRejected' })];
  const bGot = [...await b.call('received', { method: 'ide/diffAccepted' }), ...await b.call('received', { method: 'ide/diffRejected' })];
  assert.deepEqual(aGot.map((n) => n.method), ['ide/diffAccepted'], 'A hears exactly its own decision');
  assert.deepEqual(bGot.map((n) => n.method), ['ide/diffRejected'], 'B hears exactly its own decision');
  assert.equal(readFileSync(file, 'utf8'), 'original\n');
});

test('closeDiff from a session that does not own the proposal is refused', options, async (t) => {
  const { editor, ws, a, b } = await twoClis(t);
  const file = path.join(ws, 'mine.txt');
  await a.call('startDiff', { key: 'a', filePath: file, newContent: 'A\'s\n' });
  await pollUntil('A\'s diff shown', () => opensFor(editor, file).length === 1);

  // B's IdeClient gets an error result, which it reports as no content.
  assert.equal(await b.call('closeDiff', { filePath: file }), null);
  assert.equal(editor.requests.filter((r) => r.method === 'diff/close').length, 0, 'the view was closed by a stranger');
  assert.ok(editor.views.has(file));
  assert.match(editor.stderr, /closeDiff refused: the diff belongs to another session/);
  assert.equal((await outcome(a, 'a')).settled, false);

  editor.accept(file);
  assert.deepEqual(await settled(a, 'a'), { status: 'accepted', content: 'A\'s\n' });
});

test('a CLI killed with its proposal open: the editor is told, and the accept is reported undelivered', options, async (t) => {
  const { editor, ws, a, b } = await twoClis(t);
  const file = path.join(ws, 'orphan.txt');
  await a.call('startDiff', { key: 'a', filePath: file, newContent: 'orphaned text\n' });
  await pollUntil('A\'s diff shown', () => opensFor(editor, file).length === 1);
  await a.kill();

  const orphaned = await editor.waitNotification('diff/state', (p) => p.state === 'orphaned' && p.filePath === file, 15_000);
  assert.match(orphaned.params.message, /accepting writes nothing/);
  editor.accept(file);
  const lost = await editor.waitNotification('diff/state', (p) => p.state === 'undelivered' && p.filePath === file);
  assert.equal(lost.params.content, 'orphaned text\n', 'the accepted text comes back for the user to keep');
  await barrier(editor, [b], file, 'after the orphan');
  assert.deepEqual(await b.call('received', { method: 'ide/diffAccepted' }), [], 'the other CLI took the orphan\'s decision');
  assert.equal(existsSync(file), false);
});

test('the file changes on disk under an open proposal: the editor is told, and accepting needs an explicit choice', options, async (t) => {
  const { editor, ws, a } = await twoClis(t);
  const file = path.join(ws, 'moving.txt');
  writeFileSync(file, 'v1\n');
  await a.call('startDiff', { key: 'a', filePath: file, newContent: 'proposal\n' });
  await pollUntil('diff shown', () => opensFor(editor, file).length === 1);
  const diffId = opensFor(editor, file)[0].diffId;

  writeFileSync(file, 'v2, from git checkout\n');
  await editor.waitNotification('diff/state', (p) => p.state === 'changedOnDisk' && p.diskContent === 'v2, from git checkout\n');
  editor.notify('diff/accepted', { filePath: file, content: 'proposal\n', diffId });
  await editor.waitNotification('diff/state', (p) => p.state === 'needsConfirmation');
  assert.equal((await outcome(a, 'a')).settled, false, 'accepted over a change on disk without asking');
  editor.notify('diff/accepted', { filePath: file, content: 'proposal\n', diffId, overDiskChange: true });
  assert.deepEqual(await settled(a, 'a'), { status: 'accepted', content: 'proposal\n' });
});
