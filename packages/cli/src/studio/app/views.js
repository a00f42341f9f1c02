import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import htm from "htm";

const html = htm.bind(h);

/** The studio's API; a failure is an Error with the server's message. */
export async function api(path, body) {
  const response = await fetch(
    `/api/${path}`,
    body === undefined ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) },
  );
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error ?? `${response.status} ${response.statusText}`);
  return data;
}

/** The API's answer for `path`, fetched again when `path` (or `version`) changes: undefined while loading, `{ error }` when it failed. */
function useApi(path, version = 0) {
  const [result, setResult] = useState(undefined);
  useEffect(() => {
    api(path).then(setResult, (error) => setResult({ error: error.message }));
  }, [path, version]);
  return result;
}

/** What shows in place of an answer still loading or failed; undefined once it is there. */
const pending = (result) => (!result ? html`<p class="meta">Loading…</p>` : result.error ? html`<p class="error" role="alert">${result.error}</p>` : undefined);

export const when = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " UTC" : "—");

function text(content) {
  if (typeof content === "string") return content;
  return (content ?? []).map((block) => (typeof block === "string" ? block : block.type === "text" ? block.text : `[${block.type}]`)).join(" ");
}

/** One message as a bubble: tool calls and results collapsed with their arguments pretty-printed, usage and model shown. */
function Bubble({ message, onDelete, extra, focused }) {
  const { type, data } = message;
  const who = type === "generic" ? data.role : type === "tool" || type === "function" ? `${type} ${data.name ?? ""}` : type;
  const partial = data.response_metadata?.memoria_partial;
  const usage = data.usage_metadata;
  const model = data.response_metadata?.model_name ?? data.response_metadata?.model;
  const body = html`<div class="text">${text(data.content)}</div>`;
  return html`<li id=${`m-${message.position}`} class=${`bubble ${type}${focused ? " focused" : ""}`} aria-current=${focused ? "true" : undefined} aria-label=${`message ${message.position + 1}, ${who}`}>
    <div class="who">
      <span>#${message.position + 1} ${who}</span>
      ${partial && html`<span class="partial">partial answer</span>`}
      ${data.tool_call_id && html`<span>answers ${data.tool_call_id}</span>`}
      ${model && html`<span>${model}</span>`}
      ${usage && html`<span>${usage.input_tokens} in / ${usage.output_tokens} out tokens</span>`}
      ${extra}
      ${onDelete && html`<button class="danger" aria-label=${`Delete message ${message.position + 1}`} onClick=${onDelete}>Delete</button>`}
    </div>
    ${type === "tool" || type === "function" ? html`<details><summary>Result</summary>${body}${data.artifact !== undefined && html`<pre>${JSON.stringify(data.artifact, null, 2)}</pre>`}</details>` : body}
    ${(data.tool_calls ?? []).map(
      (call) => html`<details class="call"><summary>Tool call: ${call.name} (${call.id})</summary><pre>${JSON.stringify(call.args, null, 2)}</pre></details>`,
    )}
    ${(data.invalid_tool_calls ?? []).map((call) => html`<details class="call"><summary>Invalid tool call: ${call.name ?? "?"}</summary><pre>${call.args}\n${call.error ?? ""}</pre></details>`)}
  </li>`;
}

/** A conversation's messages, newest page first; `focus` (`{ at }`, a position) loads older pages until it is there, then shows it. */
function Transcript({ id, about, onChanged, focus }) {
  const [state, setState] = useState({ messages: [], from: 0, count: 0, error: undefined });
  const [status, setStatus] = useState("");
  const load = async (before) => {
    try {
      const page = await api(`transcript?key=${encodeURIComponent(id)}${before === undefined ? "" : `&before=${before}`}`);
      setState((old) => ({ ...page, messages: before === undefined ? page.messages : [...page.messages, ...old.messages] }));
    } catch (error) {
      setState((old) => ({ ...old, error: error.message }));
    }
  };
  useEffect(() => {
    load();
  }, [id]);
  useEffect(() => {
    if (!focus || state.error || state.count === 0) return;
    if (state.from > focus.at) load(state.from);
    else document.getElementById(`m-${focus.at}`)?.scrollIntoView({ block: "center" });
  }, [state, focus]);
  const remove = (position) => async () => {
    if (!confirm(`Delete message ${position + 1}? Tool results it called for go with it.`)) return;
    try {
      const result = await api("delete-message", { key: id, at: position });
      setStatus(`Deleted; ${result.count} messages left${result.reset.length ? `; reset ${result.reset.join(", ")}` : ""}.`);
      await load();
      onChanged();
    } catch (error) {
      setStatus(error.message);
    }
  };
  return html`<div>
    ${state.error && html`<p class="error" role="alert">${state.error}</p>`}
    <p class="status" aria-live="polite">${status}</p>
    ${state.from > 0 && html`<button onClick=${() => load(state.from)}>Load older messages (${state.from} more)</button>`}
    <ol class="transcript">
      ${state.messages.map((m) => html`<${Bubble} key=${m.position} message=${m} focused=${focus?.at === m.position} onDelete=${about.write ? remove(m.position) : undefined} />`)}
    </ol>
  </div>`;
}

/** One part of a recorded prompt: a range of stored messages, or text the model was given that is not stored. */
function RecordPart({ part, messages, from: first }) {
  if ("stored" in part) {
    const [from, to] = part.stored;
    return html`<li class="stored-range">
      <div class="meta">${to - from === 1 ? `stored message #${to}` : `stored messages #${from + 1}–#${to}`}, from the conversation</div>
      <ol class="transcript">${messages.slice(from - first, to - first).map((m) => html`<${Bubble} key=${m.position} message=${m} />`)}</ol>
    </li>`;
  }
  const label = part.memory ? `memory block (${part.memory}), not stored in this conversation` : `${part.type}, from the prompt`;
  return html`<li class=${`bubble ${part.memory ? "memory" : part.type}`}><div class="who">${label}</div><div class="text">${part.text}</div></li>`;
}

/** What one recorded turn's model calls were given. */
function TurnRecord({ id, at }) {
  const result = useApi(`prompt?key=${encodeURIComponent(id)}&turn=${at}`);
  if (!result || result.error) return pending(result);
  const { record, from, messages } = result;
  return record.calls.map(
    (call, i) => html`<section class="model-call" aria-label=${`Model call ${i + 1}`}>
      <p class="meta">Model call ${i + 1} of ${record.calls.length}${call.model ? ` · ${call.model}` : ""}${call.usage ? ` · ${call.usage.input} tokens in, ${call.usage.output} out` : ""} · stored ${when(Date.parse(record.at))}</p>
      <ol class="prompt">${call.parts.map((part) => html`<${RecordPart} part=${part} messages=${messages} from=${from} />`)}</ol>
    </section>`,
  );
}

/** Where each door keeps prompt records, for a conversation the studio takes to be from it. */
const RECORD_HINTS = {
  chain: html`<code>recordPrompts: true</code> on <code>RunnableWithMessageHistory</code>`,
  "ai-sdk": html`<code>memoriaMemory({ store, key, recordPrompts: true })</code> in <code>wrapLanguageModel</code>`,
  langgraph: html`<code>recordPrompts: true</code> on <code>memoriaMiddleware</code> for <code>createAgent</code>; <code>callbacks: [saver.promptRecorder(config)]</code> on a <code>StateGraph</code>'s run`,
};

/** The turns of a conversation and, for the one picked (the newest at first), exactly what its model calls were given. */
function ModelSaw({ id }) {
  const result = useApi(`prompts?key=${encodeURIComponent(id)}`);
  const [picked, setPicked] = useState(undefined);
  if (!result || result.error) return pending(result);
  if (result.turns.length === 0) return html`<p class="meta">No turns yet.</p>`;
  const turn = result.turns.find((t) => t.at === picked) ?? result.turns.at(-1);
  return html`<div>
    <div class="actions">
      <label>Turn
        <select value=${turn.at} onChange=${(e) => setPicked(Number(e.target.value))}>
          ${result.turns.map((t) => html`<option value=${t.at}>#${t.at + 1}: ${t.said}${t.recorded ? "" : " (not recorded)"}</option>`)}
        </select>
      </label>
    </div>
    ${
      turn.recorded
        ? html`<${TurnRecord} key=${turn.at} id=${id} at=${turn.at} />`
        : html`<p class="meta" role="note">This turn was stored without a record of what the model was given: it predates recording, or the app does not keep them (${RECORD_HINTS[result.door] ?? RECORD_HINTS.chain}). "Next turn (simulated)" shows what a strategy would give.</p>`
    }
  </div>`;
}

function Preview({ id }) {
  const [strategy, setStrategy] = useState("window");
  const [k, setK] = useState(3);
  const [maxTokens, setMaxTokens] = useState(200);
  const result = useApi(`preview?key=${encodeURIComponent(id)}&strategy=${strategy}&k=${k}&maxTokens=${maxTokens}`);
  return html`<div>
    <div class="actions">
      <label>Memory strategy
        <select value=${strategy} onChange=${(e) => setStrategy(e.target.value)}>
          <option value="buffer">whole history (buffer)</option>
          <option value="window">last k turns (window)</option>
          <option value="tokens">token budget</option>
        </select>
      </label>
      ${strategy === "window" && html`<label>k (turns)<input type="number" min="1" value=${k} onInput=${(e) => setK(Number(e.target.value) || 1)} /></label>`}
      ${strategy === "tokens" && html`<label>Token budget<input type="number" min="1" value=${maxTokens} onInput=${(e) => setMaxTokens(Number(e.target.value) || 1)} /></label>`}
    </div>
    ${
      pending(result) ??
      html`<p class="meta" aria-live="polite">The next turn's prompt gets ${result.messages.length} of ${result.of} messages, ${result.tokens} tokens.</p>
      ${result.summaries.length > 0 && html`<p class="meta">Stored summaries: a summary strategy puts these before the messages it keeps.</p>`}
      ${result.summaries.map((s) => html`<div class="bubble system"><div class="who">summary state "${s.name}"</div><div class="text">${s.summary}</div></div>`)}
      <ol class="transcript">${result.messages.map((m) => html`<${Bubble} key=${m.position} message=${m} extra=${html`<span>${m.tokens} tokens</span>`} />`)}</ol>`
    }
  </div>`;
}

function DerivedState({ id }) {
  const result = useApi(`state?key=${encodeURIComponent(id)}`);
  if (!result || result.error) return pending(result);
  const names = Object.keys(result.state);
  return html`<div>
    <table>
      <caption class="meta">Conversation info</caption>
      <tbody>
        <tr><th scope="row">created</th><td>${when(result.info?.createdAt)}</td></tr>
        <tr><th scope="row">last active</th><td>${when(result.info?.lastActiveAt)}</td></tr>
        <tr><th scope="row">metadata</th><td><pre>${JSON.stringify(result.info?.metadata ?? {}, null, 2)}</pre></td></tr>
      </tbody>
    </table>
    ${names.length === 0 ? html`<p class="meta">No derived state (summaries, entities, …) for this conversation.</p>` : names.map((name) => html`<details open><summary>${name}</summary><pre>${JSON.stringify(result.state[name], null, 2)}</pre></details>`)}
  </div>`;
}

/** A fact as a line: what, about whom, when it held, a button that opens the conversation it came from (the message named), and, with --write, one that withdraws it. */
function FactItem({ fact, onOpen, onWithdraw }) {
  const held = fact.withdrawn
    ? `withdrawn ${fact.withdrawn.slice(0, 10)}`
    : fact.until
      ? `${fact.since.slice(0, 10)} to ${fact.until.slice(0, 10)}`
      : `since ${fact.since.slice(0, 10)}`;
  const pairs = fact.source.session.split("&");
  // A fact a memory tool (or the MCP server) was told outside any conversation names the user's scope record: no conversation to open.
  const toldDirectly = pairs.some((pair) => pair.startsWith("memoriaScope="));
  const source = pairs
    .filter((pair) => !pair.startsWith("userId="))
    .map(decodeURIComponent)
    .join(" ");
  return html`<li class="fact">
    <span>${fact.statement}</span>
    <span class="meta">${fact.subject} · ${held}${fact.replacedBy ? ` · replaced by ${fact.replacedBy}` : ""}</span>
    ${
      toldDirectly
        ? html`<span class="meta">told through a memory tool, outside a conversation</span>`
        : html`<button class="link" onClick=${() => onOpen(fact.source.session, fact.source.message)}>from ${source}, message #${fact.source.message + 1}</button>`
    }
    ${onWithdraw && html`<button class="danger small" onClick=${() => onWithdraw(fact)}>Withdraw</button>`}
  </li>`;
}

const factList = (facts, onOpen, onWithdraw) =>
  facts.length
    ? html`<ul class="facts">${facts.map((fact) => html`<${FactItem} key=${fact.id} fact=${fact} onOpen=${onOpen} onWithdraw=${onWithdraw} />`)}</ul>`
    : html`<p class="meta">None.</p>`;

/** The long-term memory of the conversation's user: facts that hold and held, the profile, and the rest of the scope record. */
function MemoryView({ user, about, onOpen }) {
  const [version, setVersion] = useState(0);
  const [status, setStatus] = useState("");
  const result = useApi(`memory?user=${encodeURIComponent(user)}`, version);
  if (!result || result.error) return pending(result);
  const withdraw = async (fact) => {
    if (!confirm(`Withdraw "${fact.statement}"? It is kept for audit, and never given to the model again.`)) return;
    try {
      await api("withdraw-fact", { user, id: fact.id });
      setStatus(`Withdrew ${fact.id}.`);
      setVersion((v) => v + 1);
    } catch (error) {
      setStatus(error.message);
    }
  };
  const holding = result.facts.filter((fact) => !fact.until);
  const held = result.facts.filter((fact) => fact.until);
  const names = Object.keys(result.state);
  return html`<div class="memory-view">
    <p class="meta">What memoria remembers of ${user} across conversations: the model is given what holds, in a memory block.</p>
    <p class="status" aria-live="polite">${status}</p>
    <h3>Facts that hold (${holding.length})</h3>
    ${factList(holding, onOpen, about.write ? withdraw : undefined)}
    <h3>Facts that held before (${held.length})</h3>
    ${factList(held, onOpen)}
    ${result.budget && html`<p class="meta" id="memory-budget">Memory work for ${user} this period (until ${new Date(result.budget.until).toLocaleString("en")}): ${result.budget.calls.toLocaleString("en")} model calls, ${result.budget.tokens.toLocaleString("en")} tokens${result.budget.refused ? `, ${result.budget.refused} refused: the budget is spent` : ""}.</p>`}
    ${typeof result.state.recall?.indexed === "number" && html`<p class="meta" id="recall-size">Recall index: ${result.state.recall.indexed.toLocaleString("en")} messages of ${user}'s conversations.</p>`}
    ${names.map((name) => html`<details open=${name === "profile"}><summary>${name}</summary><pre>${typeof result.state[name]?.profile === "string" ? result.state[name].profile : JSON.stringify(result.state[name], null, 2)}</pre></details>`)}
  </div>`;
}

const TABS = [
  ["transcript", "Transcript"],
  ["saw", "What the model saw"],
  ["preview", "Next turn (simulated)"],
  ["state", "Derived state"],
  ["memory", "Long-term memory"],
];

/** A conversation: heading, tabs, and the actions `--write` allows; `focus` (`{ at }`) shows that message in the transcript. */
export function SessionView({ id, about, onChanged, onGone, onOpen, focus }) {
  const [tab, setTab] = useState("transcript");
  useEffect(() => {
    if (focus) setTab("transcript");
  }, [focus]);
  const [info, setInfo] = useState(undefined);
  const [status, setStatus] = useState("");
  useEffect(() => {
    api(`state?key=${encodeURIComponent(id)}`).then(
      (r) => setInfo({ ...r.info, key: r.key }),
      () => setInfo({}),
    );
  }, [id]);
  const key = info?.key ?? {};
  const off = about.write ? undefined : "Start the studio with --write to allow this";
  const branch = async () => {
    const name = prompt("New conversation id for the copy:", `${key.conversationId ?? key.sessionId ?? "copy"}-branch`);
    if (!name) return;
    const field = "conversationId" in key ? "conversationId" : "sessionId";
    const to = Object.entries({ ...key, [field]: name })
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([f, v]) => `${f}=${encodeURIComponent(v)}`)
      .join("&");
    try {
      const result = await api("branch", { key: id, to });
      setStatus(`Branched ${result.messages} messages into ${name}.`);
      onChanged();
    } catch (error) {
      setStatus(error.message);
    }
  };
  const erase = async () => {
    const user = key.userId;
    const preview = await api(`erase-preview?user=${encodeURIComponent(user)}`);
    if (!confirm(`Erase user ${user}: ${preview.sessions} conversations and ${preview.messages} messages, with their state and titles? This cannot be undone.`))
      return;
    try {
      const result = await api("erase", { user });
      onGone(`Erased ${result.erased} conversations of ${user}.`);
    } catch (error) {
      setStatus(error.message);
    }
  };
  return html`<section class="session" aria-label="Conversation">
    <div class="heading">
      <h2>${
        info?.title ??
        Object.entries(key)
          .map(([f, v]) => `${f}=${v}`)
          .join(" ")
      }</h2>
      <span class="meta">${Object.entries(key)
        .map(([f, v]) => `${f}=${v}`)
        .join(" · ")} · ${info?.messageCount ?? "?"} messages · created ${when(info?.createdAt)} · last active ${when(info?.lastActiveAt)}</span>
    </div>
    <div class="actions" aria-label="Actions">
      ${about.write ? html`<a class="button" href=${`/api/export?key=${encodeURIComponent(id)}`} download>Export JSONL</a>` : html`<button disabled title=${off}>Export JSONL</button>`}
      <button disabled=${!about.write} title=${off} onClick=${branch}>Branch</button>
      ${key.userId !== undefined && html`<button class="danger" disabled=${!about.write} title=${off} onClick=${erase}>Erase user ${key.userId}</button>`}
    </div>
    ${!about.write && html`<p class="meta" id="read-only-note">Read only: export, branch, delete, erase and withdrawing a fact need the studio started with <code>--write</code>.</p>`}
    <p class="status" aria-live="polite">${status}</p>
    <div role="tablist" aria-label="Views">
      ${TABS.filter(([name]) => name !== "memory" || key.userId !== undefined).map(([name, label]) => html`<button role="tab" id=${`tab-${name}`} aria-selected=${tab === name ? "true" : "false"} onClick=${() => setTab(name)}>${label}</button>`)}
    </div>
    <div role="tabpanel" aria-labelledby=${`tab-${tab}`}>
      ${
        tab === "transcript"
          ? html`<${Transcript} id=${id} about=${about} onChanged=${onChanged} focus=${focus} />`
          : tab === "saw"
            ? html`<${ModelSaw} id=${id} />`
            : tab === "preview"
              ? html`<${Preview} id=${id} />`
              : tab === "memory"
                ? html`<${MemoryView} user=${key.userId} about=${about} onOpen=${onOpen} />`
                : html`<${DerivedState} id=${id} />`
      }
    </div>
  </section>`;
}
