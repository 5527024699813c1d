#!/usr/bin/env node
// Reference companion for the benchmarks in scripts/bench.
//
// It is the server of the official VS Code companion (packages/vscode-ide-companion
// of google-gemini/gemini-cli) with VS Code replaced by the editor link of
// docs/editor-link.md, so that one driver can load it and gemini-ide-companion
// the same way. What is kept as the VS Code companion does it:
//   - express with express.json({limit: '10mb'}), cors that refuses any request
//     carrying an Origin, a Host check (localhost:PORT / 127.0.0.1:PORT) and a
//     Bearer token check on every request;
//   - MCP over Streamable HTTP with the TypeScript SDK, one transport per session
//     keyed by Mcp-Session-Id, a keep-alive ping every 60 s;
//   - the tools openDiff / closeDiff, closeDiff answering JSON {"content": ...};
//   - ide/diffAccepted and ide/diffRejected sent to every session;
//   - the open-files model: MRU list of at most 10 files, only the active one
//     carries cursor and selection, selection cut at 16384 UTF-16 units;
//   - a plain 50 ms trailing debounce of context updates (a continuous stream of
//     events sends nothing until it stops), then the context goes to every
//     session; one context update when a session's GET stream opens;
//   - the discovery file written with mode 0600 after unlinking any old one.
// Differences, each forced by the setting:
//   - one McpServer per session: the SDK refuses to connect one server to a
//     second transport ("Already connected to a transport"), so the VS Code
//     code, which shares one, serves a single CLI session only;
//   - the discovery file carries ideInfo and is named after the editor's
//     processId (the editor link asks for both);
//   - the body limit can be raised with REFERENCE_JSON_LIMIT (the benchmark
//     raises it so 16 MiB diffs can be compared; at 10mb they get HTTP 413);
//   - the diff view is the editor's: diff/open carries the original text read
//     from disk and an empty unifiedDiff (VS Code computes the diff itself).

import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import * as readline from 'node:readline';

import cors from 'cors';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const SERVER_VERSION = '0.0.0-reference';
const MAX_FILES = 10;
const MAX_SELECTED_TEXT_LENGTH = 16384;
const DEBOUNCE_MS = 50;
const EDITOR_REQUEST_TIMEOUT_MS = 10_000;
const JSON_LIMIT = process.env.REFERENCE_JSON_LIMIT || '10mb';

function log(message) {
  process.stderr.write(`${new Date().toISOString()} reference: ${message}\n`);
}

// ---------------------------------------------------------------------------
// Editor link: NDJSON JSON-RPC 2.0 over stdin/stdout.

function send(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

function respond(id, result) {
  send({ jsonrpc: '2.0', id, result });
}

function respondError(id, code, message) {
  send({ jsonrpc: '2.0', id, error: { code, message } });
}

function notifyEditor(method, params) {
  send({ jsonrpc: '2.0', method, params });
}

let nextEditorRequestId = 1;
const pendingEditorRequests = new Map();

function requestEditor(method, params) {
  const id = `s${nextEditorRequestId++}`;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pendingEditorRequests.delete(id);
      reject(new Error(`editor did not answer ${method} within 10 s`));
    }, EDITOR_REQUEST_TIMEOUT_MS);
    pendingEditorRequests.set(id, { resolve, reject, timer });
    send({ jsonrpc: '2.0', id, method, params });
  });
}

function onEditorResponse(message) {
  const pending = pendingEditorRequests.get(message.id);
  if (!pending) {
    return;
  }
  pendingEditorRequests.delete(message.id);
  clearTimeout(pending.timer);
  if (message.error) {
    pending.reject(new Error(message.error.message || 'editor error'));
  } else {
    pending.resolve(message.result);
  }
}

// ---------------------------------------------------------------------------
// Open files, as the VS Code companion's OpenFilesManager keeps them.

const isAbsolutePath = (p) => typeof p === 'string' && path.isAbsolute(p);

class OpenFiles {
  constructor(onDidChange) {
    this.onDidChange = onDidChange;
    this.openFiles = [];
    this.isTrusted = true;
    this.debounceTimer = undefined;
  }

  focus(filePath) {
    const currentActive = this.openFiles.find((f) => f.isActive);
    if (currentActive) {
      currentActive.isActive = false;
      currentActive.cursor = undefined;
      currentActive.selectedText = undefined;
    }
    const index = this.openFiles.findIndex((f) => f.path === filePath);
    if (index !== -1) {
      this.openFiles.splice(index, 1);
    }
    this.openFiles.unshift({ path: filePath, timestamp: Date.now(), isActive: true });
    if (this.openFiles.length > MAX_FILES) {
      this.openFiles.pop();
    }
  }

  setActiveContext(filePath, cursor, selectedText) {
    const file = this.openFiles.find((f) => f.path === filePath);
    if (!file || !file.isActive) {
      return;
    }
    file.cursor =
      cursor && Number.isInteger(cursor.line) && Number.isInteger(cursor.character)
        ? { line: cursor.line, character: cursor.character }
        : undefined;
    let text = typeof selectedText === 'string' && selectedText !== '' ? selectedText : undefined;
    if (text && text.length > MAX_SELECTED_TEXT_LENGTH) {
      text = text.substring(0, MAX_SELECTED_TEXT_LENGTH) + '... [TRUNCATED]';
    }
    file.selectedText = text;
  }

  remove(filePath) {
    const index = this.openFiles.findIndex((f) => f.path === filePath);
    if (index !== -1) {
      this.openFiles.splice(index, 1);
    }
  }

  rename(oldPath, newPath) {
    const index = this.openFiles.findIndex((f) => f.path === oldPath);
    if (index !== -1) {
      this.openFiles[index].path = newPath;
    }
  }

  fireWithDebounce() {
    if (this.debounceTimer) {
      clearTimeout(this.debounceTimer);
    }
    this.debounceTimer = setTimeout(() => {
      this.debounceTimer = undefined;
      this.onDidChange();
    }, DEBOUNCE_MS);
  }

  get state() {
    return {
      workspaceState: {
        openFiles: [...this.openFiles],
        isTrusted: this.isTrusted,
      },
    };
  }
}

// ---------------------------------------------------------------------------
// The companion: HTTP + MCP, discovery file, diffs.

class CORSError extends Error {
  constructor(message) {
    super(message);
    this.name = 'CORSError';
  }
}

const state = {
  initialized: false,
  httpServer: undefined,
  port: 0,
  authToken: '',
  idePid: 0,
  ide: undefined,
  workspaceFolders: [],
  discoveryFile: '',
  transports: {},
  openDiffs: new Map(), // filePath -> true while the editor shows it
  watchTimer: undefined,
};

const openFiles = new OpenFiles(() => broadcastIdeContextUpdate());

function workspacePath() {
  return state.workspaceFolders.join(path.delimiter);
}

function terminalEnv() {
  return {
    GEMINI_CLI_IDE_SERVER_PORT: String(state.port),
    GEMINI_CLI_IDE_WORKSPACE_PATH: workspacePath(),
    GEMINI_CLI_IDE_AUTH_TOKEN: state.authToken,
    GEMINI_CLI_IDE_PID: String(state.idePid),
  };
}

async function writeDiscoveryFile() {
  const content = JSON.stringify({
    port: state.port,
    workspacePath: workspacePath(),
    authToken: state.authToken,
    ideInfo: { name: state.ide.name, displayName: state.ide.displayName },
  });
  await fs.unlink(state.discoveryFile).catch(() => {});
  await fs.writeFile(state.discoveryFile, content, { mode: 0o600, flag: 'wx' });
}

function sendToTransport(transport, notification) {
  transport.send(notification).catch((err) => {
    log(`send ${notification.method} to ${transport.sessionId}: ${err.message}`);
  });
}

function broadcast(notification) {
  for (const transport of Object.values(state.transports)) {
    sendToTransport(transport, notification);
  }
}

function broadcastIdeContextUpdate() {
  const params = openFiles.state;
  for (const transport of Object.values(state.transports)) {
    sendToTransport(transport, { jsonrpc: '2.0', method: 'ide/contextUpdate', params });
  }
}

function connectedClients() {
  return Object.keys(state.transports).length;
}

function reportClients(message) {
  notifyEditor('status', { connectedClients: connectedClients() });
  notifyEditor('log', { level: 'info', message });
}

function createMcpServer() {
  const server = new McpServer(
    { name: 'gemini-cli-companion-mcp-server', version: '1.0.0' },
    { capabilities: { logging: {} } },
  );
  server.registerTool(
    'openDiff',
    {
      description:
        '(IDE Tool) Open a diff view to create or modify a file. Returns a notification once the diff has been accepted or rejected.',
      inputSchema: { filePath: z.string(), newContent: z.string() },
    },
    async ({ filePath, newContent }) => {
      try {
        let originalContent = null;
        try {
          originalContent = await fs.readFile(filePath, 'utf8');
        } catch {
          originalContent = null;
        }
        state.openDiffs.set(filePath, true);
        await requestEditor('diff/open', {
          filePath,
          newContent,
          originalContent,
          unifiedDiff: '',
          title: `${path.basename(filePath)} ↔ Modified`,
        });
        return { content: [] };
      } catch (err) {
        state.openDiffs.delete(filePath);
        return { isError: true, content: [{ type: 'text', text: err.message }] };
      }
    },
  );
  server.registerTool(
    'closeDiff',
    {
      description: '(IDE Tool) Close an open diff view for a specific file.',
      inputSchema: { filePath: z.string(), suppressNotification: z.boolean().optional() },
    },
    async ({ filePath }) => {
      let content;
      if (state.openDiffs.has(filePath)) {
        state.openDiffs.delete(filePath);
        try {
          const result = await requestEditor('diff/close', { filePath });
          content = result && typeof result.content === 'string' ? result.content : undefined;
        } catch (err) {
          return { isError: true, content: [{ type: 'text', text: err.message }] };
        }
      }
      return { content: [{ type: 'text', text: JSON.stringify({ content }) }] };
    },
  );
  return server;
}

function getSessionId(req) {
  const header = req.headers['mcp-session-id'];
  return Array.isArray(header) ? header[0] : header;
}

function startHttpServer() {
  return new Promise((resolve, reject) => {
    const sessionsWithInitialNotification = new Set();
    const app = express();
    app.use(express.json({ limit: JSON_LIMIT }));
    app.use(
      cors({
        origin: (origin, callback) => {
          if (!origin) {
            return callback(null, true);
          }
          return callback(new CORSError('Request denied by CORS policy.'), false);
        },
      }),
    );
    app.use((req, res, next) => {
      const host = req.headers.host || '';
      const allowedHosts = [`localhost:${state.port}`, `127.0.0.1:${state.port}`];
      if (!allowedHosts.includes(host)) {
        return res.status(403).json({ error: 'Invalid Host header' });
      }
      next();
    });
    app.use((req, res, next) => {
      const authHeader = req.headers.authorization;
      if (!authHeader) {
        res.status(401).send('Unauthorized');
        return;
      }
      const parts = authHeader.split(' ');
      if (parts.length !== 2 || parts[0] !== 'Bearer' || parts[1] !== state.authToken) {
        res.status(401).send('Unauthorized');
        return;
      }
      next();
    });

    app.post('/mcp', async (req, res) => {
      const sessionId = getSessionId(req);
      let transport;
      if (sessionId && state.transports[sessionId]) {
        transport = state.transports[sessionId];
      } else if (!sessionId && isInitializeRequest(req.body)) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (newSessionId) => {
            state.transports[newSessionId] = transport;
            reportClients('Gemini CLI connected');
          },
        });
        let missedPings = 0;
        const keepAlive = setInterval(() => {
          transport
            .send({ jsonrpc: '2.0', method: 'ping' })
            .then(() => {
              missedPings = 0;
            })
            .catch(() => {
              missedPings++;
              if (missedPings >= 3) {
                clearInterval(keepAlive);
              }
            });
        }, 60_000);
        transport.onclose = () => {
          clearInterval(keepAlive);
          if (transport.sessionId && state.transports[transport.sessionId]) {
            sessionsWithInitialNotification.delete(transport.sessionId);
            delete state.transports[transport.sessionId];
            reportClients('Gemini CLI disconnected');
          }
        };
        createMcpServer()
          .connect(transport)
          .catch((err) => log(`connect: ${err.message}`));
      } else {
        res.status(400).json({
          jsonrpc: '2.0',
          error: {
            code: -32000,
            message: 'Bad Request: No valid session ID provided for non-initialize request.',
          },
          id: null,
        });
        return;
      }
      try {
        await transport.handleRequest(req, res, req.body);
      } catch (err) {
        log(`Error handling MCP request: ${err.message}`);
        if (!res.headersSent) {
          res.status(500).json({
            jsonrpc: '2.0',
            error: { code: -32603, message: 'Internal server error' },
            id: null,
          });
        }
      }
    });

    const handleSessionRequest = async (req, res) => {
      const sessionId = getSessionId(req);
      if (!sessionId || !state.transports[sessionId]) {
        res.status(400).send('Invalid or missing session ID');
        return;
      }
      const transport = state.transports[sessionId];
      try {
        await transport.handleRequest(req, res);
      } catch (err) {
        log(`Error handling session request: ${err.message}`);
        if (!res.headersSent) {
          res.status(400).send('Bad Request');
        }
      }
      if (!sessionsWithInitialNotification.has(sessionId) && state.transports[sessionId]) {
        sendToTransport(transport, {
          jsonrpc: '2.0',
          method: 'ide/contextUpdate',
          params: openFiles.state,
        });
        sessionsWithInitialNotification.add(sessionId);
      }
    };
    app.get('/mcp', handleSessionRequest);
    app.delete('/mcp', handleSessionRequest);

    app.use((err, req, res, next) => {
      if (err instanceof CORSError) {
        res.status(403).json({ error: 'Request denied by CORS policy.' });
      } else {
        next(err);
      }
    });

    const server = app.listen(0, '127.0.0.1', () => {
      state.port = server.address().port;
      resolve(server);
    });
    server.on('error', reject);
  });
}

// ---------------------------------------------------------------------------
// Editor link methods.

function validateInitialize(params) {
  if (!params || typeof params !== 'object') {
    return 'params must be an object';
  }
  if (params.protocolVersion !== 1) {
    return 'protocolVersion must be 1';
  }
  const ide = params.ide;
  if (!ide || typeof ide.name !== 'string' || ide.name === '') {
    return 'ide.name must be a non-empty string';
  }
  if (typeof ide.displayName !== 'string' || ide.displayName === '') {
    return 'ide.displayName must be a non-empty string';
  }
  if (params.processId !== undefined && params.processId !== null && !Number.isInteger(params.processId)) {
    return 'processId must be an integer';
  }
  const folders = params.workspaceFolders ?? [];
  if (!Array.isArray(folders) || !folders.every(isAbsolutePath)) {
    return 'workspaceFolders must be a list of absolute paths';
  }
  if (params.isTrusted !== undefined && typeof params.isTrusted !== 'boolean') {
    return 'isTrusted must be a boolean';
  }
  return '';
}

async function initialize(id, params) {
  if (state.initialized) {
    respondError(id, -32600, 'already initialized');
    return;
  }
  const problem = validateInitialize(params);
  if (problem) {
    respondError(id, -32602, problem);
    return;
  }
  state.initialized = true;
  state.ide = params.ide;
  state.workspaceFolders = params.workspaceFolders ?? [];
  openFiles.isTrusted = params.isTrusted ?? true;
  state.authToken = randomUUID();
  state.idePid = params.processId > 0 ? params.processId : process.ppid;
  try {
    state.httpServer = await startHttpServer();
    const dir = path.join(os.tmpdir(), 'gemini', 'ide');
    await fs.mkdir(dir, { recursive: true });
    state.discoveryFile = path.join(dir, `gemini-ide-server-${state.idePid}-${state.port}.json`);
    await writeDiscoveryFile();
  } catch (err) {
    respondError(id, -32603, `start: ${err.message}`);
    return;
  }
  if (state.idePid !== process.ppid && params.processId > 0) {
    state.watchTimer = setInterval(() => {
      try {
        process.kill(state.idePid, 0);
      } catch {
        void shutdown();
      }
    }, 500);
  }
  respond(id, {
    port: state.port,
    authToken: state.authToken,
    idePid: state.idePid,
    discoveryFile: state.discoveryFile,
    env: terminalEnv(),
    serverVersion: SERVER_VERSION,
    pid: process.pid,
  });
}

let shuttingDown = false;

async function shutdown(id) {
  if (shuttingDown) {
    return;
  }
  shuttingDown = true;
  clearInterval(state.watchTimer);
  if (state.discoveryFile) {
    await fs.unlink(state.discoveryFile).catch(() => {});
  }
  if (state.httpServer) {
    state.httpServer.closeAllConnections();
    state.httpServer.close();
  }
  if (id !== undefined) {
    respond(id, null);
  }
  process.stdout.write('', () => process.exit(0));
}

function onContextEvent(method, params) {
  if (!params || typeof params !== 'object') {
    return;
  }
  switch (method) {
    case 'context/fileFocused':
      if (!isAbsolutePath(params.path)) return;
      openFiles.focus(params.path);
      openFiles.setActiveContext(params.path, params.cursor, params.selectedText);
      break;
    case 'context/selectionChanged': {
      if (!isAbsolutePath(params.path)) return;
      const active = openFiles.openFiles.find((f) => f.isActive);
      if (!active || active.path !== params.path) {
        openFiles.focus(params.path);
      }
      openFiles.setActiveContext(params.path, params.cursor, params.selectedText);
      break;
    }
    case 'context/fileClosed':
      if (!isAbsolutePath(params.path)) return;
      openFiles.remove(params.path);
      break;
    case 'context/fileRenamed':
      if (!isAbsolutePath(params.oldPath) || !isAbsolutePath(params.newPath)) return;
      openFiles.rename(params.oldPath, params.newPath);
      break;
    case 'workspace/trustChanged':
      if (typeof params.isTrusted !== 'boolean') return;
      openFiles.isTrusted = params.isTrusted;
      break;
    case 'workspace/foldersChanged':
      if (!Array.isArray(params.workspaceFolders) || !params.workspaceFolders.every(isAbsolutePath)) return;
      state.workspaceFolders = params.workspaceFolders;
      writeDiscoveryFile().catch((err) => log(`discovery file: ${err.message}`));
      break;
    default:
      return;
  }
  openFiles.fireWithDebounce();
}

function onDiffDecision(method, params) {
  if (!params || typeof params.filePath !== 'string' || !state.openDiffs.has(params.filePath)) {
    return;
  }
  state.openDiffs.delete(params.filePath);
  if (method === 'diff/accepted') {
    broadcast({
      jsonrpc: '2.0',
      method: 'ide/diffAccepted',
      params: { filePath: params.filePath, content: String(params.content ?? '') },
    });
  } else {
    broadcast({ jsonrpc: '2.0', method: 'ide/diffRejected', params: { filePath: params.filePath } });
  }
}

function onRequest(message) {
  const { id, method, params } = message;
  if (method === 'initialize') {
    void initialize(id, params);
    return;
  }
  if (!state.initialized) {
    respondError(id, -32002, 'not initialized');
    return;
  }
  switch (method) {
    case 'shutdown':
      void shutdown(id);
      return;
    case 'status/get':
      respond(id, {
        connectedClients: connectedClients(),
        port: state.port,
        discoveryFile: state.discoveryFile,
        idePid: state.idePid,
        workspaceFolders: state.workspaceFolders,
        serverVersion: SERVER_VERSION,
        openDiffs: [...state.openDiffs.keys()],
      });
      return;
    default:
      respondError(id, -32601, `method not found: ${method}`);
  }
}

function onNotification(message) {
  if (!state.initialized) {
    return;
  }
  const { method, params } = message;
  if (method.startsWith('context/') || method.startsWith('workspace/')) {
    onContextEvent(method, params);
  } else if (method === 'diff/accepted' || method === 'diff/rejected') {
    onDiffDecision(method, params);
  }
}

function onLine(line) {
  if (line.trim() === '') {
    return;
  }
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    respondError(null, -32700, 'parse error');
    return;
  }
  if (!message || typeof message !== 'object' || message.jsonrpc !== '2.0') {
    respondError(null, -32600, 'invalid request');
    return;
  }
  const hasId = message.id !== undefined && message.id !== null;
  if (typeof message.method === 'string') {
    if (hasId) {
      onRequest(message);
    } else {
      onNotification(message);
    }
  } else if (hasId && ('result' in message || 'error' in message)) {
    onEditorResponse(message);
  } else {
    respondError(null, -32600, 'invalid request');
  }
}

const input = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on('line', onLine);
input.on('close', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
