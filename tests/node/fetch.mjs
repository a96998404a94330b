// Node's own fetch (undici) through the proxy, as a user's script sends a form (tests/test_e2e_addressed.py).
//
//   node fetch.mjs PROXY_URL URL BODY [CONTENT_TYPE]
//
// Trusts the proxy's CA from NODE_EXTRA_CA_CERTS; prints the status line and the answer's body.
import { readFileSync } from "node:fs";
import { ProxyAgent, setGlobalDispatcher } from "undici";

const [proxy, url, body, type = "application/x-www-form-urlencoded"] = process.argv.slice(2);
setGlobalDispatcher(new ProxyAgent({ uri: proxy, requestTls: { ca: readFileSync(process.env.NODE_EXTRA_CA_CERTS, "utf8") } }));
const r = await fetch(url, { method: "POST", body, headers: { "content-type": type } });
console.log(r.status);
console.log(await r.text());
