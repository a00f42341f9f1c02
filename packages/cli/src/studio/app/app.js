import { h, render } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import htm from "htm";
import { SessionView, api, when } from "./views.js";

const html = htm.bind(h);

// The token has been traded for a cookie: keep it out of the address bar (and of screenshots and shared links).
if (location.search.includes("token=")) history.replaceState(null, "", "/");

function SessionList({ selected, onSelect, refresh }) {
  const [user, setUser] = useState("");
  const [query, setQuery] = useState("");
  const [list, setList] = useState({ sessions: [], cursor: undefined, error: undefined });
  const load = useCallback(
    async (cursor) => {
      const params = new URLSearchParams({ user, q: query });
      if (cursor) params.set("cursor", cursor);
      try {
        const page = await api(`sessions?${params}`);
        setList((old) => ({ sessions: cursor ? [...old.sessions, ...page.sessions] : page.sessions, cursor: page.cursor }));
      } catch (error) {
        setList({ sessions: [], error: error.message });
      }
    },
    [user, query],
  );
  useEffect(() => {
    load();
  }, [load, refresh]);
  return html`<nav aria-label="Conversations">
    <form role="search" onSubmit=${(e) => {
      e.preventDefault();
      load();
    }}>
      <label>User (userId)<input name="user" value=${user} onInput=${(e) => setUser(e.target.value)} placeholder="all users" /></label>
      <label>Search titles and keys<input name="q" type="search" value=${query} onInput=${(e) => setQuery(e.target.value)} /></label>
    </form>
    ${list.error && html`<p class="error" role="alert">${list.error}</p>`}
    <p class="meta" aria-live="polite">${list.sessions.length} conversation${list.sessions.length === 1 ? "" : "s"}, newest first</p>
    <ul class="sessions">
      ${list.sessions.map(
        (s) => html`<li key=${s.id}>
          <button aria-current=${selected === s.id ? "true" : "false"} onClick=${() => onSelect(s.id)}>
            <span class="title">${
              s.title ||
              Object.entries(s.key)
                .map(([f, v]) => `${f}=${v}`)
                .join(" ")
            }</span>
            <span class="meta">${s.title ? `${Object.values(s.key).join(" · ")} · ` : ""}${s.messageCount} messages · ${when(s.lastActiveAt)}</span>
          </button>
        </li>`,
      )}
    </ul>
    ${list.cursor && html`<button onClick=${() => load(list.cursor)}>More conversations</button>`}
  </nav>`;
}

function App() {
  const [about, setAbout] = useState(undefined);
  const [selected, setSelected] = useState(undefined);
  /** A message to show in the selected conversation (a fact's source), as `{ at }`: a new object on each click. */
  const [focus, setFocus] = useState(undefined);
  const [refresh, setRefresh] = useState(0);
  const [notice, setNotice] = useState("");
  useEffect(() => {
    api("about").then(setAbout, (error) => setAbout({ error: error.message }));
  }, []);
  if (!about) return html`<p class="loading">Loading…</p>`;
  if (about.error) return html`<p class="error" role="alert">${about.error}</p>`;
  return html`<header>
      <h1>memoria studio</h1>
      <span class="store">${about.label}</span>
      <span class=${`badge${about.write ? " write" : ""}`}>${about.write ? "write actions on" : "read only"}</span>
    </header>
    <main>
      <${SessionList} selected=${selected} onSelect=${(id) => {
        setNotice("");
        setFocus(undefined);
        setSelected(id);
      }} refresh=${refresh} />
      ${
        selected
          ? html`<${SessionView} key=${selected} id=${selected} about=${about} onChanged=${() => setRefresh((n) => n + 1)} focus=${focus} onOpen=${(id, at) => {
              setSelected(id);
              setFocus(at === undefined ? undefined : { at });
            }} onGone=${(message) => {
              setNotice(message);
              setSelected(undefined);
              setRefresh((n) => n + 1);
            }} />`
          : html`<section class="session"><p class="status" role="status">${notice}</p><p class="meta">Choose a conversation.</p></section>`
      }
    </main>`;
}

render(html`<${App} />`, document.getElementById("app"));
