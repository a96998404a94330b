// The OpenAI Agents SDK (@openai/agents) through the proxy (driven by tests/test_e2e_agents_node.py).
//
//   node agents.mjs PROXY_URL SCENARIO.json
//
// SCENARIO.json holds {"instruction": the user's request, "inbox": what the read_inbox tool returned}. An Agent
// with two real tools (read_inbox, send_email) resumes a run in which it already called read_inbox, on Chat
// Completions (the local agent server speaks that API; OPENAI_BASE_URL may name it) with tracing off (its export would go to
// api.openai.com/v1/traces). Its model answers with a send_email call; the SDK validates the arguments against the
// tool's JSON schema and runs the tool, whose arguments are printed as one JSON line per mode:
// {"client": "openai-agents" | "openai-agents-stream", "sent": {"to": …, "body": …}}.
import { readFileSync } from "node:fs";
import { ProxyAgent, setGlobalDispatcher } from "undici";
import { Agent, run, setDefaultOpenAIKey, setOpenAIAPI, setTracingDisabled, tool } from "@openai/agents";

const [proxy, scenarioPath] = process.argv.slice(2);
const ca = readFileSync(process.env.NODE_EXTRA_CA_CERTS, "utf8");
setGlobalDispatcher(new ProxyAgent({ uri: proxy, requestTls: { ca } }));
setDefaultOpenAIKey("sk-agents-e2e");
setOpenAIAPI("chat_completions");
setTracingDisabled(true);

const scenario = JSON.parse(readFileSync(scenarioPath, "utf8"));
const sent = [];
const readInbox = tool({
  name: "read_inbox", description: "Read the user's inbox.", strict: true,
  parameters: { type: "object", properties: {}, required: [], additionalProperties: false },
  execute: async () => scenario.inbox,
});
const sendEmail = tool({
  name: "send_email", description: "Send an e-mail.", strict: true,
  parameters: { type: "object", properties: { to: { type: "string" }, body: { type: "string" } },
    required: ["to", "body"], additionalProperties: false },
  execute: async (args) => { sent.push(args); return "sent"; },
});
const agent = new Agent({ name: "assistant", instructions: "You help the user with their e-mail.",
  model: "gpt-4o", tools: [readInbox, sendEmail], toolUseBehavior: { stopAtToolNames: ["send_email"] } });
const input = [
  { type: "message", role: "user", content: scenario.instruction },
  { type: "function_call", callId: "call_inbox", name: "read_inbox", arguments: "{}", status: "completed" },
  { type: "function_call_result", callId: "call_inbox", name: "read_inbox", status: "completed",
    output: { type: "text", text: scenario.inbox } },
];

for (const [client, stream] of [["openai-agents", false], ["openai-agents-stream", true]]) {
  try {
    const result = await run(agent, input, { stream, maxTurns: 3 });
    if (stream) await result.completed;
    console.log(JSON.stringify({ client, sent: sent.pop() ?? null }));
  } catch (e) {
    console.log(JSON.stringify({ client, error: String(e?.stack ?? e) }));
  }
}
