// navqa web page: reads /api/ask/stream (Server-Sent Events over fetch, so a bearer token
// can be sent) and shows each step as it arrives. Everything from the server is inserted
// as text, never as HTML.
"use strict";

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function authHeaders() {
  const t = document.getElementById("token");
  const h = {};
  const token = (t && t.value) || sessionStorage.getItem("navqa-token");
  if (token) {
    h["Authorization"] = "Bearer " + token;
    sessionStorage.setItem("navqa-token", token);
  }
  return h;
}

function short(iri) {
  if (!iri) return "—";
  const m = String(iri).match(/[#/]([^#/]+)$/);
  return m ? m[1] : String(iri);
}

function termText(t) {
  if (!t) return "";
  return t.type === "uri" ? short(t.value) : t.value;
}

function renderResult(table, result) {
  table.replaceChildren();
  if (!result) return;
  if ("boolean" in result) {
    table.appendChild(el("tr")).appendChild(el("td", result.boolean ? "yes" : "no"));
    return;
  }
  if (!result.head) return;
  const vars = result.head.vars || [];
  const head = table.appendChild(el("tr"));
  vars.forEach((v) => head.appendChild(el("th", v)));
  (result.results.bindings || []).forEach((b) => {
    const tr = table.appendChild(el("tr"));
    vars.forEach((v) => tr.appendChild(el("td", termText(b[v]))));
  });
}

// The SPARQL with each lint finding marked where it is (line/column ranges, 1-based).
function renderSparql(pre, sparql, findings) {
  pre.replaceChildren();
  const lines = sparql.split("\n");
  lines.forEach((line, i) => {
    const n = i + 1;
    const here = findings.filter((f) => f.line === n).sort((a, b) => a.column - b.column);
    let pos = 0;
    here.forEach((f) => {
      const start = Math.max(pos, f.column - 1);
      const end = f.end_line === n ? Math.max(start + 1, f.end_column - 1) : line.length;
      pre.appendChild(document.createTextNode(line.slice(pos, start)));
      const m = el("mark", line.slice(start, end), "lint-" + f.severity);
      m.title = f.rule + ": " + f.message;
      pre.appendChild(m);
      pos = end;
    });
    pre.appendChild(document.createTextNode(line.slice(pos) + (n < lines.length ? "\n" : "")));
  });
}

function describeStep(ev) {
  switch (ev.type) {
    case "MentionsExtracted":
      return "mentions: " + (ev.mentions.classes.join(", ") || "none") + "; values: " +
        (ev.mentions.values.map((v) => "'" + v.text + "'").join(", ") || "none");
    case "Linked":
      return "linked classes: " + ev.classes.slice(0, 5).map((c) => short(c.iri)).join(", ") +
        "; properties: " + ev.properties.slice(0, 5).map((p) => short(p.iri)).join(", ");
    case "AnswerTypePredicted":
      return "answer type: " + ev.kind + (ev.cls ? " (" + short(ev.cls) + ")" : "");
    case "ValuesGrounded":
      return "values: " + (ev.groundings.map((g) => "'" + g.mention + "' → " + short(g.prop) +
        " = '" + g.stored + "'").join(", ") || "none found");
    case "PropertiesJudged":
      return "judge at " + short(ev.node) + " (depth " + ev.depth + "): keep " +
        (ev.selected.map(short).join(", ") || "—");
    case "SubgraphExpanded":
      return "subgraph at " + short(ev.root) + ": " + ev.edges.length + " edges";
    case "SubgraphVerbalized":
      return null;
    case "SubgraphsReranked":
      return "chosen subgraph: " + short(ev.chosen);
    case "QuerySynthesized":
      return "SPARQL written (" + ev.method + ")";
    case "QueryChecked":
      return "check: " + (ev.ok ? "ok" : "refused") + (ev.issues.length ? "; " + ev.issues.join("; ") : "");
    case "QueryExecuted":
      return "executed: " + ev.rows + " row(s)" + (ev.empty ? " — empty" : "");
    default:
      return ev.stage + ": " + ev.type;
  }
}

async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let name = "message";
      const data = [];
      block.split("\n").forEach((line) => {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      });
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}

function show(id) { document.getElementById(id).hidden = false; }

async function ask(ev) {
  ev.preventDefault();
  const question = document.getElementById("question").value.trim();
  const vkg = document.getElementById("vkg").value;
  if (!question) return;
  const status = document.getElementById("status");
  const steps = document.getElementById("steps");
  ["answer-box", "steps-box", "sparql-box", "result-box", "triage-box"].forEach((id) => {
    document.getElementById(id).hidden = true;
  });
  steps.replaceChildren();
  document.getElementById("lint").replaceChildren();
  document.getElementById("triage").replaceChildren();
  status.className = "";
  status.textContent = "working…";
  const params = new URLSearchParams({ question: question, vkg: vkg });
  let lint = [];
  let expansion = null;
  const subgraphs = {};
  let response;
  try {
    response = await fetch("/api/ask/stream?" + params, { headers: authHeaders() });
  } catch (e) {
    status.className = "error";
    status.textContent = "the service cannot be reached: " + e;
    return;
  }
  if (!response.ok) {
    const body = await response.json().catch(() => ({ detail: response.statusText }));
    status.className = "error";
    status.textContent = response.status + ": " + body.detail;
    if (response.status === 401) document.getElementById("token").hidden = false;
    return;
  }
  await readEvents(response, (name, data) => {
    if (name === "step") {
      if (data.type === "SubgraphVerbalized") subgraphs[data.root] = data.text;
      const text = describeStep(data);
      if (text) {
        show("steps-box");
        let parent = steps;
        if (data.type === "PropertiesJudged" || data.type === "SubgraphExpanded") {
          // one judge decision per node: folded, the chosen subgraph is what matters
          if (!expansion) {
            const li = steps.appendChild(el("li"));
            li.dataset.type = "expansion";
            expansion = li.appendChild(el("details"));
            expansion.appendChild(el("summary", "expansion", "step-name"));
            expansion.appendChild(el("ol"));
          }
          parent = expansion.querySelector("ol");
          expansion.querySelector("summary").textContent = "expansion (" +
            (parent.children.length + 1) + " steps)";
        }
        const li = parent.appendChild(el("li"));
        li.dataset.type = data.type;
        li.appendChild(el("span", data.stage, "step-name"));
        li.appendChild(document.createTextNode(" " + text));
        if (data.type === "SubgraphsReranked" && subgraphs[data.chosen]) {
          li.appendChild(el("pre", subgraphs[data.chosen], "subgraph"));
        }
      }
      if (data.type === "QuerySynthesized" || data.type === "QueryChecked") {
        show("sparql-box");
        renderSparql(document.getElementById("sparql"), data.sparql, lint);
      }
    } else if (name === "lint") {
      lint = data.findings || [];
      const ul = document.getElementById("lint");
      ul.replaceChildren();
      lint.forEach((f) => ul.appendChild(el("li", f.line + ":" + f.column + " " + f.severity +
        " [" + f.rule + "] " + f.message, "lint-" + f.severity)));
    } else if (name === "triage") {
      show("triage-box");
      data.reasons.forEach((r) => document.getElementById("triage").appendChild(el("li", r)));
    } else if (name === "answer") {
      status.textContent = data.error ? "" : "done in " + data.timings.total.toFixed(2) + " s";
      show("answer-box");
      const a = document.getElementById("answer");
      a.replaceChildren();
      if (data.error) {
        a.appendChild(el("p", "no answer: " + data.error, "error"));
      } else if (data.answer.length === 0) {
        a.appendChild(el("p", "The query ran and returned nothing."));
      } else {
        const ul = a.appendChild(el("ul"));
        data.answer.forEach((v) => ul.appendChild(el("li", v)));
      }
      document.getElementById("confidence").textContent = "confidence: " +
        data.confidence.level + (data.confidence.reasons.length ? " (" +
        data.confidence.reasons.join("; ") + ")" : "");
      if (data.sparql) {
        show("sparql-box");
        renderSparql(document.getElementById("sparql"), data.sparql, lint);
        document.getElementById("query-link").href = "/query?" +
          new URLSearchParams({ query: data.sparql, vkg: data.vkg });
      }
      if (data.result) {
        show("result-box");
        renderResult(document.getElementById("result"), data.result);
      }
    } else if (name === "error") {
      status.className = "error";
      status.textContent = (data.status || "") + " " + data.error_kind + ": " + data.detail;
    }
  });
}

async function runQuery() {
  const data = JSON.parse(document.body.dataset.query);
  const status = document.getElementById("status");
  status.textContent = "running…";
  const r = await fetch("/api/sparql", {
    method: "POST", body: JSON.stringify(data),
    headers: Object.assign({ "Content-Type": "application/json" }, authHeaders()),
  });
  const body = await r.json();
  if (!r.ok) {
    status.className = "error";
    status.textContent = r.status + ": " + body.detail;
    return;
  }
  status.textContent = "";
  renderResult(document.getElementById("result"), body);
}

// The query page: lint the query and mark the findings in place.
async function lintQuery() {
  const data = JSON.parse(document.body.dataset.query);
  const r = await fetch("/api/lint", {
    method: "POST", body: JSON.stringify(data),
    headers: Object.assign({ "Content-Type": "application/json" }, authHeaders()),
  });
  if (!r.ok) return;
  const body = await r.json();
  const findings = body.findings || [];
  renderSparql(document.getElementById("sparql"), data.query, findings);
  const ul = document.getElementById("lint");
  findings.forEach((f) => ul.appendChild(el("li", f.line + ":" + f.column + " " + f.severity +
    " [" + f.rule + "] " + f.message + (f.suggestion ? " — " + f.suggestion : ""),
    "lint-" + f.severity)));
  ul.dataset.done = "true";
}

document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("ask-form");
  if (form) {
    const vkgs = JSON.parse(document.body.dataset.vkgs || "[]");
    const sel = document.getElementById("vkg");
    vkgs.forEach((v) => sel.appendChild(el("option", v.name)).setAttribute("value", v.name));
    sel.addEventListener("change", () => {
      document.getElementById("audit-link").href = "/audit?vkg=" + encodeURIComponent(sel.value);
    });
    if (document.body.dataset.auth === "true" && !sessionStorage.getItem("navqa-token")) {
      document.getElementById("token").hidden = false;
    }
    form.addEventListener("submit", ask);
  }
  const run = document.getElementById("run");
  if (run) {
    run.addEventListener("click", runQuery);
    lintQuery();
  }
});
