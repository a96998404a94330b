// guardian-proxy dashboard. Everything from the server is put on the page with textContent, never as HTML.
"use strict";

const TOKEN = document.querySelector('meta[name="guardian-token"]').content;
const MAX_ROWS = 200;
const WORDS = { allow: "allowed", transform: "rewritten", deny: "blocked" };
const state = { rows: [], gateway: null, statsTimer: null, es: null, q: "", paused: false, pending: [],
                lost: false, retryTimer: null, backoff: 1000, filterTimer: null, tokenChanged: false };
const RETRY_MAX_MS = 10000;

// ------------------------------------------------------------------ helpers

function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

async function api(path, opts = {}) {
  const headers = { "X-Guardian-Token": TOKEN, ...(opts.body ? { "Content-Type": "application/json" } : {}) };
  const r = await fetch(path, { ...opts, headers, credentials: "same-origin" });
  const data = await r.json().catch(() => ({}));
  if (r.status === 401) tokenChanged();
  if (!r.ok) throw Object.assign(new Error(data.error || `HTTP ${r.status}`), { status: r.status });
  return data;
}

const fmtTime = (ts) => new Date(ts * 1000).toLocaleTimeString();
const fmtNum = (x, d = 2) => (typeof x === "number" ? x.toFixed(d) : "–");
const cats = (c) => Object.entries(c || {}).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}×${v}`).join(" ") || "–";
const words = (s) => String(s || "–").replaceAll("_", " ");

function badge(action, level) {
  const text = action === "transform" && level ? `${WORDS[action] || action} L${level}` : WORDS[action] || action;
  return h("span", { class: `badge ${action}` }, text);
}

// "rewritten L2" and, when escalation raised the level, what was asked for: never one level beside another unsaid
function levelTag(d) {
  return d.action === "transform" && d.start_level && d.final_level && d.final_level > d.start_level
    ? h("span", { class: "tag", title: "the guesser re-identified the person at the level asked for" }, `asked L${d.start_level}`)
    : null;
}

const withQ = (path) => (state.q ? `${path}?q=${encodeURIComponent(state.q)}` : path);

function flash(text, kind = "ok") {
  let box = document.getElementById("flashes");
  if (!box) document.body.appendChild(box = h("div", { id: "flashes" }));
  const n = h("div", { class: `flash ${kind}`, role: "status" }, text);
  box.appendChild(n);
  setTimeout(() => n.remove(), 4000);
}

// ------------------------------------------------------------------ live decisions

function row(d) {
  const tr = h("tr", { class: `decision ${d.action}`, "data-id": d.id, "data-host": d.host, "data-action": d.action,
                       "data-site": d.site || "", onclick: () => openDetail(d.id) },
    h("td", { class: "nowrap" }, fmtTime(d.ts)),
    // a fleet (state.backend redis): which gateway decided it; this gateway's own are dimmed
    state.gateway ? h("td", { class: `gw nowrap${d.gateway === state.gateway ? " muted" : ""}`, "data-testid": "gateway" },
                      d.gateway || "–") : null,
    h("td", {}, badge(d.action, d.final_level || d.start_level), levelTag(d),
      d.override ? h("span", { class: "tag" }, "override") : null),
    h("td", { class: "req" }, h("b", {}, d.method || ""), " ", d.host || "", h("span", { class: "muted" }, d.path || "")),
    // the program that sent it (procinfo.py): curl, python3 agent.py, chromium; remote / unknown when not known
    h("td", { class: "app nowrap", "data-testid": "app", title: d.app && d.app.exe ? d.app.exe : (d.app && d.app.why) || "" },
      d.app ? d.app.name : "–"),
    h("td", {}, words(d.recipient)),
    h("td", { class: "cats" }, cats(d.categories)),
    h("td", { class: "num" }, fmtNum(d.R)),
    h("td", { class: "why" }, d.why !== undefined ? d.why : d.explanation || ""));
  return tr;
}

function addDecision(d, live) {
  const body = document.querySelector("#decisions tbody");
  const tr = row(d);
  if (live) tr.classList.add("new");
  body.insertBefore(tr, body.firstChild);
  while (body.children.length > MAX_ROWS) body.removeChild(body.lastChild);
}

// the cells a destination shares in every view: recipient, requests, actions, and the data sent as is, rewritten
// or stopped (counts per type, never values)
function flowCells(x) {
  return [
    h("td", {}, words(x.recipient)),
    h("td", { class: "num" }, x.requests),
    h("td", { class: "nowrap" }, `${x.actions.allow} / ${x.actions.transform} / ${x.actions.deny}`),
    h("td", { class: "cats" }, cats(x.as_is)),
    h("td", { class: "cats" }, cats(x.rewritten)),
    h("td", { class: "cats" }, cats(x.blocked)),
  ];
}

function renderStats(s) {
  document.getElementById("count-total").textContent = s.total;
  for (const a of ["allow", "transform", "deny"]) document.getElementById(`count-${a}`).textContent = s.actions[a] || 0;
  document.getElementById("count-latency").textContent = s.latency_ms.p95 === null ? "–" : fmtNum(s.latency_ms.p95, 1);
  Charts.timeline(document.getElementById("chart-time"), s.timeline);
  Charts.histogram(document.getElementById("chart-risk"), s.risk_histogram);
  Charts.actions(document.getElementById("chart-actions"), s.actions);
  const body = document.querySelector("#destinations tbody");
  body.replaceChildren(...s.destinations.map((d) => h("tr", { "data-host": d.host },
    h("td", {}, d.host),
    ...flowCells(d),
    h("td", { class: "num" }, fmtNum(d.max_R)))));
}

function scheduleStats() {
  if (state.statsTimer) return;
  state.statsTimer = setTimeout(async () => {
    state.statsTimer = null;
    try { renderStats(await api("/api/stats")); } catch (e) { console.warn(e); }
  }, 400);
}

async function loadSnapshot() {
  const snap = await api(withQ("/api/snapshot"));
  state.gateway = snap.gateway || null;  // set for a fleet: the table shows which gateway decided each row
  document.getElementById("th-gateway").classList.toggle("hidden", !state.gateway);
  document.querySelector("#decisions tbody").replaceChildren();
  state.pending = [];
  renderPending();
  for (const d of snap.recent) addDecision(d, false);
  renderStats(snap.stats);
  document.getElementById("filter-note").textContent = state.q ? `${snap.matched} matching` : "";
}

function setLive(text, cls) {
  const live = document.getElementById("live");
  live.textContent = text;
  live.className = `pill ${cls}`;
}

// The event stream, filtered by the server. After a restart (the stream ends, the port is closed for a while) it
// comes back by itself: the browser retries while it can, and when it gives up (readyState CLOSED) the page probes
// the API with growing pauses and opens a new stream once it answers; the gap is filled from the snapshot.
function connect() {
  if (state.tokenChanged) return;
  if (state.es) state.es.close();
  clearTimeout(state.retryTimer);
  const es = new EventSource(withQ("/api/events"));
  state.es = es;
  es.addEventListener("open", () => {
    if (es !== state.es) return;
    setLive("live", "on");
    state.backoff = 1000;
    if (state.lost) {
      state.lost = false;
      loadSnapshot().catch(console.warn);
      loadConfig().catch(console.warn);
    }
  });
  es.addEventListener("decision", (ev) => {
    if (es !== state.es) return;
    const d = JSON.parse(ev.data);
    if (state.paused) {
      state.pending.push(d);
      renderPending();
    } else {
      addDecision(d, true);
      scheduleGrouped();
    }
    scheduleStats();
  });
  // the server ends the stream with this event when the dashboard's token is replaced (`--new-token`): this page's
  // token no longer opens anything, so it says so once and stops, instead of showing "live" or retrying
  es.addEventListener("token", () => {
    if (es !== state.es) return;
    tokenChanged();
  });
  es.addEventListener("error", () => {
    if (es !== state.es || state.tokenChanged) return;
    state.lost = true;
    setLive("reconnecting…", "off");
    if (es.readyState === EventSource.CLOSED) retryLater();
  });
}

const TOKEN_CHANGED = "token changed — reopen from `guardian-proxy dashboard`";

function tokenChanged() {
  state.tokenChanged = true;
  if (state.es) state.es.close();
  state.es = null;
  clearTimeout(state.retryTimer);
  setLive(TOKEN_CHANGED, "warn");
  document.getElementById("live").title = "the dashboard's token was replaced: open the address " +
    "`guardian-proxy dashboard` prints (this page's token no longer works)";
}

function retryLater() {
  clearTimeout(state.retryTimer);
  if (state.tokenChanged) return;
  state.retryTimer = setTimeout(async () => {
    try {
      await api("/api/stats");
      connect();
    } catch (e) {
      if (e.status === 401) return tokenChanged();  // nothing this page holds will open it again
      state.backoff = Math.min(RETRY_MAX_MS, state.backoff * 2);
      retryLater();
    }
  }, state.backoff);
}

// ------------------------------------------------------------------ filter and pause

function currentQuery() {
  const text = document.getElementById("filter").value.trim();
  const action = document.getElementById("filter-action").value;
  const onlyData = document.getElementById("only-data").checked;
  return [text, action ? `action:${action}` : "", onlyData ? "data:yes" : ""].filter(Boolean).join(" ");
}

async function applyFilter() {
  const q = currentQuery();
  const input = document.getElementById("filter");
  try {
    const prev = state.q;
    state.q = q;
    await loadSnapshot().catch((e) => { state.q = prev; throw e; });
    input.classList.remove("invalid");
    input.title = "";
    connect();
    for (const name of Object.keys(GROUPED)) if (isShown(name)) loadGrouped(name).catch(console.warn);
  } catch (e) {
    input.classList.add("invalid");
    input.title = e.message;
    document.getElementById("filter-note").textContent = e.message;
  }
}

function filterSoon() {
  clearTimeout(state.filterTimer);
  state.filterTimer = setTimeout(applyFilter, 250);
}

function renderPending() {
  const n = state.pending.length;
  document.getElementById("pending").textContent = state.paused ? `paused · ${n} new` : "";
}

function togglePause() {
  const b = document.getElementById("pause");
  state.paused = !state.paused;
  b.textContent = state.paused ? "Resume" : "Pause";
  b.classList.toggle("paused", state.paused);
  if (!state.paused) {
    for (const d of state.pending) addDecision(d, true);
    state.pending = [];
    scheduleGrouped();
  }
  renderPending();
}

// ------------------------------------------------------------------ per-site view

const hostsOf = (t) => (t.hosts.length === 1 && t.hosts[0] === t.domain ? "" : t.hosts.join(", "));

function renderSites(list) {
  const box = document.getElementById("sites");
  if (!list.length) return box.replaceChildren(h("p", { class: "muted" }, "no decisions yet"));
  box.replaceChildren(...list.map((g) => h("section", { class: "site", "data-site": g.site || "" },
    h("h3", {}, g.site ? `on ${g.site}: ${g.third_parties} third part${g.third_parties === 1 ? "y" : "ies"} ` +
                         `got requests` : "no page known (apps, command-line tools, the browser itself: see Apps)",
      h("span", { class: "muted" }, ` · ${g.requests} requests (${g.own_requests} to the site itself) · ` +
        `${g.actions.allow} allowed / ${g.actions.transform} rewritten / ${g.actions.deny} blocked `),
      g.preflights ? h("span", { class: "muted", "data-testid": "preflights",
                                 title: "the browser asking whether it may send (OPTIONS): no data of the page, not counted as requests" },
                       `· ${g.preflights} CORS preflight${g.preflights === 1 ? "" : "s"} apart `) : null,
      g.site ? h("button", { class: "ov", "data-testid": "site-filter", onclick: () => showFiltered(`site:${g.site}`) }, "show requests") : null),
    g.third.length ? h("div", { class: "tablewrap" }, h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, ...["third party", "recipient", "requests", "allowed / rewritten / blocked",
        "received as is", "received rewritten", "stopped", "max R"].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...g.third.map((t) => h("tr", { "data-domain": t.domain },
        h("td", {}, t.domain, h("div", { class: "hosts" }, hostsOf(t),
          t.preflights ? ` (+${t.preflights} preflight${t.preflights === 1 ? "" : "s"})` : "")),
        ...flowCells(t),
        h("td", { class: "num" }, fmtNum(t.max_R)))))))
      : h("p", { class: "muted" }, "no third parties"))));
}

// ------------------------------------------------------------------ grouped views (Sites, Apps)

const GROUPED = {
  sites: { path: "/api/sites", render: (r) => renderSites(r.sites), timer: null },
  apps: { path: "/api/apps", render: (r) => renderApps(r.apps), timer: null },
};

function isShown(name) {
  return !document.getElementById(`tab-${name}`).classList.contains("hidden");
}

async function loadGrouped(name) {
  const g = GROUPED[name];
  g.render(await api(withQ(g.path)));
}

function scheduleGrouped() {  // new decisions: the open grouped view reloads, at most every 500 ms
  for (const [name, g] of Object.entries(GROUPED)) {
    if (g.timer || !isShown(name)) continue;
    g.timer = setTimeout(() => {
      g.timer = null;
      if (!state.paused) loadGrouped(name).catch(console.warn);
    }, 500);
  }
}

function showFiltered(filter) {  // a group's "show requests": the live table with its filter
  document.getElementById("filter").value = filter;
  showTab("overview");
  applyFilter();
}

// ------------------------------------------------------------------ per-app view

const appTitle = (a) => (a.known ? `${a.label}${a.kind ? ` (${a.kind})` : ""}` : a.label);

function appOverride(a, t) {
  if (!a.rule_app) return "";
  const btn = (action, label) => h("button", { class: `ov ${action}`, "data-testid": `app-${action}-${t.domain}`,
    title: `guardian-proxy ${action} ${t.domain} --app "${a.rule_app}"`,
    onclick: () => setOverride(action, t.domain, null, null, a.rule_app) }, label);
  return h("span", { class: "nowrap" }, btn("allow", "Always allow"), " ", btn("deny", "Always deny"));
}

function renderApps(list) {
  const box = document.getElementById("apps");
  if (!list.length) return box.replaceChildren(h("p", { class: "muted", "data-testid": "apps-empty" }, "no decisions yet"));
  box.replaceChildren(...list.map((a) => h("section", { class: "appgroup", "data-app": a.app || "", "data-testid": "app-group" },
    h("h3", { title: a.exe || "" }, appTitle(a),
      h("span", { class: "muted" }, ` · ${a.requests} request${a.requests === 1 ? "" : "s"}, ${a.with_data} with personal ` +
        `data · ${a.actions.allow} allowed / ${a.actions.transform} rewritten / ${a.actions.deny} blocked `),
      a.preflights ? h("span", { class: "muted" }, `· ${a.preflights} CORS preflight${a.preflights === 1 ? "" : "s"} apart `) : null,
      a.filter ? h("button", { class: "ov", "data-testid": "app-filter", title: a.filter, onclick: () => showFiltered(a.filter) },
                   "show requests") : null),
    kv([["sent as is", cats(a.as_is)], ["sent rewritten", cats(a.rewritten)], ["stopped", cats(a.blocked)],
        ["recipients", Object.keys(a.recipients).map(words).join(", ") || "–"],
        ["pages", Object.keys(a.sites).join(", ") || undefined]]),
    a.destinations.length ? h("div", { class: "tablewrap" }, h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, ...["talked to", "recipient", "requests", "allowed / rewritten / blocked",
        "sent as is", "sent rewritten", "stopped", a.rule_app ? `override for ${a.rule_app}` : ""].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...a.destinations.map((t) => h("tr", { "data-domain": t.domain },
        h("td", {}, t.domain, h("div", { class: "hosts" }, hostsOf(t))),
        ...flowCells(t),
        h("td", {}, appOverride(a, t)))))))
      : null,
    a.more_destinations ? h("p", { class: "muted" }, `and ${a.more_destinations} more destinations`) : null)));
}


// ------------------------------------------------------------------ detail view

function kv(pairs) {
  return h("dl", { class: "kv" }, pairs.filter(([, v]) => v !== undefined).flatMap(([k, v]) =>
    [h("dt", {}, k), h("dd", {}, v === null || v === "" ? "–" : v)]));
}

function overrideButtons(domain, categories) {
  const wrap = h("div", { class: "overrides" });
  const btn = (action, category, label, testid) => h("button", {
    class: `ov ${action}`, "data-testid": testid,
    onclick: () => setOverride(action, domain, category),
  }, label);
  wrap.append(btn("allow", null, `Always allow ${domain}`, "ov-allow-domain"),
              btn("deny", null, `Always deny ${domain}`, "ov-deny-domain"));
  for (const c of Object.keys(categories || {})) {
    if (c === "unparsed") continue;
    wrap.append(btn("allow", c, `Always allow ${words(c)} to ${domain}`, `ov-allow-cat-${c}`),
                btn("deny", c, `Always deny ${words(c)} to ${domain}`, `ov-deny-cat-${c}`));
  }
  return wrap;
}

async function setOverride(action, domain, category, term, app) {
  try {
    const res = await api("/api/overrides", { method: "POST", body: JSON.stringify({ action, domain, category,
      ...(term ? { for: term } : {}), ...(app ? { app } : {}) }) });
    renderOverrides(res.overrides);
    const when = term === "once" ? "once" : term ? `for ${term}` : "always";
    const what = `${category ? words(category) + " to " : ""}${domain}`;
    flash(`Override saved: ${action} ${app ? `what ${app} sends to ${domain}` : what} ${when} — applies to the next request`);
  } catch (e) {
    flash(`Override failed: ${e.message}`, "err");
  }
}

function section(title, ...content) {
  return h("section", { class: "dsec" }, h("h3", {}, title), ...content);
}

// a stand-in as it left, marked: made up by the rewrite, of a kind no one holds (the server checked both)
function standin(value, type) {
  return h("mark", { class: "standin", "data-type": type, title: `stand-in for ${words(type).toLowerCase()}: made up, no one holds it` },
    value, h("span", { class: "standin-tag" }, "stand-in"));
}

const withStandins = (list) => list.map(([text, type]) => (type ? standin(text, type) : text));

// The actions first: allow once, for an hour, always, or deny — for this decision's domain
function actionBar(d, domain) {
  const btn = (action, term, label, testid) => h("button", { class: `ov ${action}`, "data-testid": testid,
    onclick: () => setOverride(action, domain, null, term) }, label);
  const allow = d.action !== "allow";
  return h("div", { class: "actions", "data-testid": "detail-actions" },
    allow ? btn("allow", "once", "Allow once", "act-once") : null,
    allow ? btn("allow", "1h", "Allow 1 hour", "act-1h") : null,
    allow ? btn("allow", null, "Always allow", "act-always") : null,
    d.action !== "deny" ? btn("deny", null, "Deny", "act-deny") : null,
    h("span", { class: "muted" }, ` ${domain}`));
}

// What left the machine, decoded: a rewritten query as key = value lines, a body pretty-printed by the server.
function leftSection(d) {
  const rw = d.rewritten;
  const content = [h("p", {}, d.left || (d.action === "deny" ? "Nothing left the machine: the request was blocked."
    : d.action === "allow" ? "The request left as it was." : ""))];
  if (rw) {
    content.push(h("h4", {}, "Rewritten form, decoded"));
    const path = (rw.path || "").split("?")[0];
    content.push(kv([["request", `${d.method} ${d.scheme}://${d.host}${path || d.path || ""}`]]));
    if (rw.standins && rw.standins.length) {
      content.push(h("p", { class: "standin-note", "data-testid": "standins" }, "Stand-ins that left in place of your data " +
        "(made up, of a kind no one holds): ", ...rw.standins.flatMap((x, i) => [i ? ", " : "", standin(x.value, x.type)])));
    }
    if (rw.query_parts && rw.query_parts.length) {
      content.push(h("pre", { class: "left query", "data-testid": "left-query" },
        ...rw.query_parts.flatMap(([k, vp], i) => [i ? "\n" : "", `${k} = `, ...withStandins(vp)])));
    } else if (rw.query && rw.query.length) {
      content.push(h("pre", { class: "left query", "data-testid": "left-query" }, rw.query.map(([k, v]) => `${k} = ${v}`).join("\n")));
    }
    if (rw.body_parts) {
      content.push(h("pre", { class: "left body", "data-testid": "left-body" }, ...withStandins(rw.body_parts), rw.body_truncated ? "\n…" : ""));
    } else if (rw.body !== undefined && rw.body !== null) {
      content.push(h("pre", { class: "left body", "data-testid": "left-body" }, rw.body + (rw.body_truncated ? "\n…" : "")));
    } else {
      content.push(h("p", { class: "muted" }, rw.body_note || "body unchanged"));
    }
  }
  return section("What left the machine", ...content);
}

async function openDetail(id) {
  let d;
  try { d = await api(`/api/decision/${encodeURIComponent(id)}`); } catch (e) { return flash(e.message, "err"); }
  const panel = document.getElementById("detail");
  const body = document.getElementById("detail-body");
  document.getElementById("detail-title").replaceChildren(badge(d.action, d.final_level || d.start_level), " ", d.host);
  const six = d.six || { domain: d.host, categories: d.categories, recipient: d.recipient, purposes: d.purposes,
                         basis: d.basis };
  const p = d.plain || { verdict: d.verdict, why: d.why !== undefined ? d.why : d.explanation,
                         numbers: typeof d.R === "number" ? `R ${fmtNum(d.R)} (${d.tier || "?"} tier)` : null };
  const parts = [
    actionBar(d, six.domain || d.host),
    d.sentence ? h("p", { class: "sentence", "data-testid": "sentence" }, d.sentence) : null,
    h("div", { class: "plain", "data-testid": "plain" },
      h("p", {}, h("b", {}, p.verdict || WORDS[d.action] || d.action), p.why ? `: ${p.why}` : ""),
      p.levels ? h("p", { class: "levels" }, p.levels) : null,
      p.rule ? h("p", { class: "rule" }, `Rule: ${p.rule}.`) : null,
      p.numbers ? h("p", { class: "numbers" }, p.numbers) : null,
      d.elsewhere ? h("p", { class: "elsewhere muted", "data-testid": "elsewhere" }, d.note) : null),
    leftSection(d),
    kv([["decision id", d.id], ["gateway", d.gateway || undefined], ["time", new Date(d.ts * 1000).toLocaleString()], ["request", `${d.method} ${d.scheme}://${d.host}${d.path}`],
        ["override", d.override], ["rule", d.rule], ["latency", `${fmtNum(d.latency_ms, 1)} ms`]]),
    section("Action (six-tuple)", kv([
      ["destination", six.domain], ["categories", cats(six.categories)], ["recipient", words(six.recipient)],
      ["owner", six.owner], ["purposes", (six.purposes || []).map(words).join(", ")], ["basis", words(six.basis)],
      ["outgoing text", six.outgoing ? `${six.outgoing.fields} fields; spans ${cats(six.outgoing.spans)}` : undefined],
      ["body format", six.body_format], ["flags", (d.flags || []).join(", ")]])),
  ];
  const lk = d.likelihood || { value: d.L, path: d.l_path, u: d.u };
  const f = d.factors;
  parts.push(section("Risk", kv([
    ["L (violation likelihood)", `${fmtNum(lk.value, 3)} via ${lk.path || "–"} path${lk.u !== null && lk.u !== undefined ? `, u ${fmtNum(lk.u, 3)}` : ""}`],
    ["reason", lk.reason || undefined],
    ...(f ? [["Sd · Mtr · Mp · Mb", `${fmtNum(f.Sd)} · ${fmtNum(f.Mtr)} · ${fmtNum(f.Mp)} · ${fmtNum(f.Mb)}`],
             ["Seff", fmtNum(f.Seff, 3)], ["MT", fmtNum(f.MT)], ["R", p.numbers || fmtNum(f.R, 3)],
             ["tier", `${f.tier}: allow ≤ ${fmtNum(f.allow_ceiling)}, deny ≥ ${fmtNum(f.deny_floor)}`]]
         : [["R", fmtNum(d.R, 3)], ["tier", d.tier]])]),
    f ? Charts.riskBar(f) : null));
  parts.push(section("Levels", kv([["start level (asked for)", d.start_level ? `L${d.start_level}` : "–"],
    ["final level", d.final_level ? `L${d.final_level}` : "–"], ["escalation rounds", d.rounds],
    ["rewritten spans", cats(d.spans)]])));
  // which recognizer found each span and why, by field path (the server's lines: types, paths, rules, never values)
  const found = d.found_lines || [];
  parts.push(section("Found by", found.length
    ? h("ul", { class: "found", "data-testid": "found-lines" }, found.map((line) => h("li", {}, line)))
    : h("p", { class: "muted", "data-testid": "found-lines" }, "no personal data found in what was sent")));
  const ev = d.evidence_detail;
  if (ev) {
    parts.push(section(`Policy evidence (transparency: ${words(ev.transparency)})`,
      ev.statements.length ? h("ol", { class: "evidence" }, ev.statements.map((s) => h("li", {},
        h("q", {}, s.text),
        h("div", { class: "muted" }, `${s.id} · score ${fmtNum(s.score, 3)} · ${s.practice}; data: ${s.data_categories.join(", ") || "–"}; ` +
          `recipients: ${s.recipients.map(words).join(", ") || "–"}; purposes: ${s.purposes.map(words).join(", ") || "–"}`))))
        : h("p", { class: "muted" }, "no policy statements found for this destination")));
  } else if (d.evidence && d.evidence.length) {
    parts.push(section("Policy evidence", h("p", { class: "muted" }, `statement ids: ${d.evidence.join(", ")}`)));
  }
  parts.push(section("More overrides", overrideButtons(six.domain || d.host, six.categories)));
  body.replaceChildren(...parts);
  panel.classList.remove("hidden");
  panel.dataset.id = d.id;
}

// ------------------------------------------------------------------ overrides and configuration

const fmtWhen = (iso) => (iso ? new Date(iso).toLocaleString([], { dateStyle: "short", timeStyle: "short" }) : "–");

function fmtSpan(ms) {
  const m = Math.round(ms / 60000);
  if (m < 60) return `${m} min`;
  if (m < 48 * 60) return `${Math.round(m / 6) / 10} h`.replace(".0 h", " h");
  return `${Math.round(m / 1440)} days`;
}

// how long a rule lasts, and when it ends, in words
function overrideTerm(o) {
  if (o.once) return ["once (the next matching request)", o.state === "spent" ? `used ${fmtWhen(o.spent)}` : "when used"];
  if (o.expires) {
    const span = o.created ? fmtSpan(new Date(o.expires) - new Date(o.created)) : "until a time";
    return [span, `${o.state === "expired" ? "ended" : "ends"} ${fmtWhen(o.expires)}`];
  }
  if (o.run) return ["until the proxy restarts", o.state === "ended" ? "ended (restarted)" : "at restart"];
  return ["forever", "never"];
}

const EMPTY_OVERRIDES = "No overrides yet. Add one with the buttons at the top of a decision's detail view (Allow once, " +
  "1 hour, Always, Deny), the block page's buttons, or `guardian-proxy allow|deny DOMAIN`.";

function renderOverrides(list) {
  const body = document.querySelector("#overrides tbody");
  if (!list.length) {
    return body.replaceChildren(h("tr", {}, h("td", { class: "empty", colspan: 12, "data-testid": "overrides-empty" },
                                                EMPTY_OVERRIDES)));
  }
  body.replaceChildren(...list.map((o) => {
    const [duration, ends] = overrideTerm(o);
    return h("tr", { "data-id": o.id || "", class: o.state && o.state !== "active" ? "inactive" : "" },
      h("td", {}, badge(o.action === "level" ? "transform" : o.action, o.level),
        o.state && o.state !== "active" ? h("span", { class: "tag" }, o.state) : null),
      h("td", {}, o.domain || "–"), h("td", {}, o.category ? words(o.category) : "–"),
      h("td", { "data-testid": "ov-owner" }, o.owner || "–"),
      h("td", { "data-testid": "ov-recipient" }, o.recipient ? words(o.recipient) : "–"),
      h("td", {}, o.app || "–"),
      h("td", { "data-testid": "ov-duration" }, duration), h("td", { "data-testid": "ov-ends", class: "nowrap" }, ends),
      h("td", { class: "num", "data-testid": "ov-matched" }, o.matched ?? 0),
      h("td", { class: "nowrap", "data-testid": "ov-last" }, o.last_matched ? fmtWhen(o.last_matched) : "never"),
      h("td", {}, o.source),
      h("td", {}, o.source === "store" ? removeButton(o) : ""));
  }));
}

// remove asks first: the button turns into "remove?" + "keep"; only the second click removes
function removeButton(o) {
  const cell = h("span", { class: "remove" });
  const ask = () => cell.replaceChildren(
    h("button", { class: "ov deny", "data-testid": `ov-confirm-${o.number}`,
                  onclick: () => removeOverride(o.id || o.number) }, "Remove this rule?"),
    " ", h("button", { class: "ov", "data-testid": `ov-cancel-${o.number}`, onclick: () => cell.replaceChildren(first) }, "Keep"));
  const first = h("button", { class: "ov", "data-testid": `ov-remove-${o.number}`, onclick: ask }, "remove");
  cell.append(first);
  return cell;
}

async function removeOverride(key) {
  try {
    const body = typeof key === "number" ? { number: key } : { id: key };
    renderOverrides((await api("/api/overrides/remove", { method: "POST", body: JSON.stringify(body) })).overrides);
    flash("Override removed");
  } catch (e) { flash(e.message, "err"); }
}

async function loadConfig() {
  const c = await api("/api/config");
  document.getElementById("proxy-addr").textContent = `proxy ${c.proxy} · ${c.mode} mode`;
  document.querySelector("#models tbody").replaceChildren(...c.models.map((m) => h("tr", { class: `state-${m.state}` },
    h("td", {}, m.name), h("td", {}, h("span", { class: `badge ${m.state}` }, m.state)), h("td", {}, m.detail))));
  const run = c.run || {};
  const given = new Set(run.given || []);
  const shown = (k, show) => (given.has(k) ? show(run[k]) : "not known (the proxy did not say)");
  document.getElementById("proxy-info").replaceChildren(...kv([["proxy", c.proxy], ["mode", c.mode],
    ["--ssl-insecure", shown("ssl_insecure", (v) => (v ? "on: upstream TLS certificates are NOT verified"
                                                       : "off (upstream certificates verified)"))],
    ["--redirect-upstream", shown("redirect_upstream", (v) => v || "off")],
    ["CA certificate", shown("ca", (v) => v || "–")], ["mitmproxy confdir", shown("confdir", (v) => v || "–")],
    ["PAC file", c.pac_url], ["decision log", c.decision_log], ["started", new Date(c.started * 1000).toLocaleString()]]).childNodes);
  document.getElementById("settings").textContent = JSON.stringify(c.settings, null, 2);
  document.getElementById("overrides-file").textContent = `${c.settings.state_dir}/overrides.yaml`;
}

function showTab(name) {
  document.getElementById("detail").classList.add("hidden");
  for (const b of document.querySelectorAll("nav .tab")) b.classList.toggle("active", b.dataset.tab === name);
  for (const s of document.querySelectorAll(".tab-body")) s.classList.toggle("hidden", s.id !== `tab-${name}`);
  if (name === "overrides") api("/api/overrides").then((r) => renderOverrides(r.overrides)).catch(console.warn);
  if (name === "config") loadConfig().catch(console.warn);
  if (name in GROUPED) loadGrouped(name).catch(console.warn);
}

document.querySelectorAll("nav .tab").forEach((b) => b.addEventListener("click", () => showTab(b.dataset.tab)));
document.getElementById("filter").addEventListener("input", filterSoon);
document.getElementById("filter").addEventListener("keydown", (e) => { if (e.key === "Enter") { clearTimeout(state.filterTimer); applyFilter(); } });
document.getElementById("filter-action").addEventListener("change", applyFilter);
document.getElementById("only-data").addEventListener("change", applyFilter);
document.getElementById("pause").addEventListener("click", togglePause);
document.getElementById("detail-close").addEventListener("click", () => document.getElementById("detail").classList.add("hidden"));
document.addEventListener("keydown", (e) => { if (e.key === "Escape") document.getElementById("detail").classList.add("hidden"); });

// `#decision=<id>` (the block page's "see this decision" lands here): open that decision's detail view
function openFromHash() {
  const m = /^#decision=([\w-]+)$/.exec(location.hash);
  if (m) openDetail(decodeURIComponent(m[1]));
}
window.addEventListener("hashchange", openFromHash);

loadSnapshot().catch((e) => flash(e.message, "err")).finally(() => { connect(); openFromHash(); });
loadConfig().catch(console.warn);
