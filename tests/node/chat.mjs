// Real npm AI SDKs through the proxy (driven by tests/test_e2e_node_sdks.py).
//
//   node chat.mjs PROXY_URL SAID [CLIENT ...]
//
// Every client sends SAID as the user's message to its service's public API (api.openai.com,
// api.anthropic.com) through the HTTP proxy PROXY_URL, trusting the proxy's CA from NODE_EXTRA_CA_CERTS,
// and prints one JSON line per client: {"client": name, "text": what the SDK handed the program}.
// Node's own fetch (which the SDKs use) takes undici's global dispatcher, so one ProxyAgent serves them all.
import { readFileSync } from "node:fs";
import { ProxyAgent, setGlobalDispatcher } from "undici";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { generateText, streamText } from "ai";
import { createOpenAI } from "@ai-sdk/openai";

const [proxy, said, ...wanted] = process.argv.slice(2);
const ca = readFileSync(process.env.NODE_EXTRA_CA_CERTS, "utf8");
setGlobalDispatcher(new ProxyAgent({ uri: proxy, requestTls: { ca } }));

const messages = [{ role: "user", content: said }];
const openai = new OpenAI({ apiKey: "sk-e2e", maxRetries: 0 });
const anthropic = new Anthropic({ apiKey: "sk-ant-e2e", maxRetries: 0 });
const vercel = createOpenAI({ apiKey: "sk-e2e" });
const tools = [{ type: "function", function: { name: "save_contact", description: "Save a contact",
  parameters: { type: "object", properties: { name: { type: "string" }, email: { type: "string" },
    note: { type: "string" } } } } }];

const clients = {
  "openai-chat": async () => (await openai.chat.completions.create({ model: "gpt-4o", messages })).choices[0].message.content,
  "openai-chat-stream": async () => {
    let text = "";
    for await (const c of await openai.chat.completions.create({ model: "gpt-4o", messages, stream: true })) {
      text += c.choices[0]?.delta?.content ?? "";
    }
    return text;
  },
  "openai-tools": async () => {
    const r = await openai.chat.completions.create({ model: "gpt-4o", messages, tools });
    return r.choices[0].message.tool_calls[0].function.arguments;
  },
  "openai-responses": async () => (await openai.responses.create({ model: "gpt-4o", input: said })).output_text,
  "openai-responses-stream": async () => {
    let text = "";
    for await (const e of await openai.responses.create({ model: "gpt-4o", input: said, stream: true })) {
      if (e.type === "response.output_text.delta") text += e.delta;
    }
    return text;
  },
  "anthropic-messages": async () => {
    const r = await anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 256, messages });
    return r.content.map((b) => b.text ?? "").join("");
  },
  "anthropic-messages-stream": async () => {
    const s = anthropic.messages.stream({ model: "claude-sonnet-4-5", max_tokens: 256, messages });
    let text = "";
    s.on("text", (t) => { text += t; });
    await s.finalMessage();
    return text;
  },
  "vercel-ai-chat": async () => (await generateText({ model: vercel.chat("gpt-4o"), messages, maxRetries: 0 })).text,
  "vercel-ai-chat-stream": async () => {
    const r = streamText({ model: vercel.chat("gpt-4o"), messages, maxRetries: 0, onError: ({ error }) => { throw error; } });
    let text = "";
    for await (const t of r.textStream) text += t;
    return text;
  },
  "vercel-ai-responses": async () => (await generateText({ model: vercel.responses("gpt-4o"), messages, maxRetries: 0 })).text,
};

for (const name of wanted.length ? wanted : Object.keys(clients)) {
  try {
    console.log(JSON.stringify({ client: name, text: await clients[name]() }));
  } catch (e) {
    console.log(JSON.stringify({ client: name, error: String(e?.stack ?? e) }));
  }
}
