// mcp-hub console: live updates and actions without a reload. Every page
// works without this module (forms post and redirect back); with it, a
// page listens on /ui/events and swaps its live regions ([data-live]) for
// the server's fresh rendering when the hub says something changed, and
// the buttons post in the background.

// The page knows a script runs (a module runs before the page is loaded).
document.body.dataset.js = 'on';

const csrf = document.querySelector('meta[name="csrf-token"]')?.content ?? '';
const live = document.getElementById('live');
const flashArea = document.getElementById('flash');

function setLive(on, text) {
  if (!live) return;
  live.dataset.state = on ? 'on' : 'off';
  live.textContent = text;
}

function flash(ok, text) {
  if (!flashArea) return;
  const p = document.createElement('p');
  p.className = 'flash ' + (ok ? 'ok' : 'bad');
  p.textContent = text;
  flashArea.replaceChildren(p);
}

// refresh fetches the page again and replaces each live region whose
// content changed, keeping open <details> and the focus.
let refreshing = null;
let again = false;
async function refresh() {
  if (refreshing) { again = true; return refreshing; }
  refreshing = (async () => {
    do {
      again = false;
      let res;
      try {
        res = await fetch(location.href, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'text/html' } });
      } catch { return; }
      if (res.status === 401) { location.reload(); return; }
      if (!res.ok) return;
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      const focused = document.activeElement?.id;
      const open = new Set([...document.querySelectorAll('details[open][id]')].map((d) => d.id));
      for (const region of document.querySelectorAll('[data-live][id]')) {
        const next = doc.getElementById(region.id);
        if (next && next.innerHTML !== region.innerHTML) {
          region.innerHTML = next.innerHTML;
          if (next.className !== region.className) region.className = next.className;
        }
      }
      for (const id of open) document.getElementById(id)?.setAttribute('open', '');
      if (focused && document.activeElement?.id !== focused) document.getElementById(focused)?.focus();
      document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
    } while (again);
  })();
  try { await refreshing; } finally { refreshing = null; }
}

// The catalog's search ranks as one types: the page is fetched again
// with the words (the hub ranks, as hub_search_tools does); the form still
// searches on the server without JavaScript.
const search = document.getElementById('q');
let typing = null;
search?.addEventListener('input', () => {
  const u = new URL(location.href);
  if (search.value) u.searchParams.set('q', search.value); else u.searchParams.delete('q');
  history.replaceState(null, '', u);
  clearTimeout(typing);
  typing = setTimeout(refresh, 150);
});

// Actions post in the background and show their message.
document.addEventListener('submit', async (ev) => {
  const form = ev.target;
  if (!(form instanceof HTMLFormElement) || !form.hasAttribute('data-action')) return;
  ev.preventDefault();
  if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
  const button = form.querySelector('button');
  button?.setAttribute('aria-busy', 'true');
  try {
    const res = await fetch(form.action, {
      method: 'POST', credentials: 'same-origin',
      headers: { Accept: 'application/json', 'X-CSRF-Token': csrf },
      body: new URLSearchParams(new FormData(form)),
    });
    let out = { ok: res.ok, message: res.statusText };
    try { out = await res.json(); } catch { /* not JSON: keep the status */ }
    if (out.redirect) { location.assign(out.redirect); return; }
    flash(out.ok, out.message);
    if (form.action.endsWith('/remove') && document.body.dataset.page === 'server' && out.ok) { location.assign('/ui/'); return; }
    await refresh();
  } catch (err) {
    flash(false, 'The hub did not answer: ' + err);
  } finally {
    button?.removeAttribute('aria-busy');
  }
});

// Live updates.
// The stream starts from the state the page showed when it was loaded (a
// reconnection too: at worst one refresh more).
function listen() {
  const es = new EventSource('/ui/events?since=' + encodeURIComponent(document.body.dataset.digest ?? ''));
  es.addEventListener('open', () => setLive(true, 'Live: this page updates itself.'));
  es.addEventListener('refresh', () => { refresh(); });
  es.addEventListener('error', () => setLive(false, 'Live updates interrupted; reconnecting…'));
}
listen();
