// A scripted ACP client on the official SDK's client API
// (@agentclientprotocol/sdk 2.x, ACP v1), driven by the Go tests: it starts
// the agent command given as JSON in ACP_AGENT, reads operations as JSON
// lines on stdin and writes everything the agent does as JSON lines on
// stdout. Operations (each may carry a "tag", echoed in its result):
//   {"op":"initialize","fs":true}          fs: offer fs/read_text_file and fs/write_text_file
//   {"op":"new","cwd":DIR,"mcpServers":[]} {"op":"load","sessionId":ID,"cwd":DIR}
//   {"op":"prompt","sessionId":ID,"text":T} runs in the background; its result comes when the turn ends
//   {"op":"cancel","sessionId":ID}
//   {"op":"permission","answer":A}          how to answer session/request_permission:
//                                           an optionId, "kind:allow_once" (the option of that kind),
//                                           "cancelled", or "ask" (emit it and wait for an "answer" op)
//   {"op":"answer","id":N,"answer":A}       answers the asked request N
//   {"op":"exit"}
// Events: {"ev":"result","op","tag","result"|"error"}, {"ev":"update","sessionId","update"},
// {"ev":"permission","id","params"}, {"ev":"read","path"}, {"ev":"write","path","content"},
// {"ev":"exit","code","signal"}.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [cmd, ...args] = JSON.parse(process.env.ACP_AGENT);
const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
const out = (ev) => process.stdout.write(JSON.stringify(ev) + "\n");
child.on("exit", (code, signal) => out({ ev: "exit", code, signal }));

let policy = "kind:allow_once";
let nextAsk = 0;
const asked = new Map();

function choose(answer, params) {
  if (answer === "cancelled") return { outcome: { outcome: "cancelled" } };
  if (answer.startsWith("kind:")) {
    const opt = params.options.find((o) => o.kind === answer.slice(5));
    if (!opt) throw new Error(`no option of kind ${answer.slice(5)} in ${JSON.stringify(params.options)}`);
    return { outcome: { outcome: "selected", optionId: opt.optionId } };
  }
  return { outcome: { outcome: "selected", optionId: answer } };
}

const app = acp
  .client({ name: "gemini-a2a-acp-test" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    out({ ev: "update", sessionId: params.sessionId, update: params.update });
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    const id = ++nextAsk;
    out({ ev: "permission", id, params });
    if (policy !== "ask") return choose(policy, params);
    const answer = await new Promise((resolve) => asked.set(id, resolve));
    return choose(answer, params);
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    out({ ev: "read", path: params.path });
    return { content: readFileSync(params.path, "utf8") };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    out({ ev: "write", path: params.path, content: params.content });
    writeFileSync(params.path, params.content);
    return {};
  });

const conn = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
const agent = conn.agent;

async function run(op) {
  switch (op.op) {
    case "initialize":
      return agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: !!op.fs, writeTextFile: !!op.fs } },
        clientInfo: { name: "gemini-a2a-acp-test", version: "1" },
      });
    case "new":
      return agent.request(acp.methods.agent.session.new, { cwd: op.cwd, mcpServers: op.mcpServers ?? [] });
    case "load":
      return agent.request(acp.methods.agent.session.load, { sessionId: op.sessionId, cwd: op.cwd, mcpServers: op.mcpServers ?? [] });
    case "prompt":
      return agent.request(acp.methods.agent.session.prompt, { sessionId: op.sessionId, prompt: [{ type: "text", text: op.text }] });
    case "cancel":
      await agent.notify(acp.methods.agent.session.cancel, { sessionId: op.sessionId });
      return {};
    case "permission":
      policy = op.answer;
      return {};
    case "answer": {
      const resolve = asked.get(op.id);
      asked.delete(op.id);
      if (!resolve) throw new Error(`no permission request ${op.id} waits`);
      resolve(op.answer);
      return {};
    }
    case "exit":
      child.stdin.end();
      return {};
  }
  throw new Error(`unknown op ${op.op}`);
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const op = JSON.parse(line);
  run(op).then(
    (result) => out({ ev: "result", op: op.op, tag: op.tag, result: result ?? {} }),
    (err) => out({ ev: "result", op: op.op, tag: op.tag, error: { code: err.code, message: err.message, data: err.data } }),
  );
}
// The end of the script: the agent's input is closed, as an editor closes
// it, and the client ends with the agent.
child.stdin.end();
child.on("exit", () => process.exit(0));
if (child.exitCode !== null || child.signalCode !== null) process.exit(0);
