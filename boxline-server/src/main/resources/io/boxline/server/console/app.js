import { api, session, signIn, may, ApiError } from './api.js';
import { h, clear, field } from './dom.js';
import { notify } from './ui.js';
import { overview } from './overview.js';
import { subscription } from './subscription.js';
import { events } from './events.js';
import { failures } from './failures.js';
import { admin } from './admin.js';

const REFRESH_MS = 2000;
const main = document.getElementById('main');
let page = null;
let timer = null;

// Routes are the hash: #/, #/subscription/<name>, #/events?…, #/failures?…, #/admin.
function route() {
  const [path, q] = (location.hash.slice(1) || '/').split('?');
  const params = Object.fromEntries(new URLSearchParams(q || ''));
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const section = parts[0] || 'overview';
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.nav === (section === 'subscription' ? 'overview' : section)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  notify('');
  if (section === 'subscription' && parts[1]) page = subscription(main, parts[1]);
  else if (section === 'events') page = events(main, params);
  else if (section === 'failures') page = failures(main, params);
  else if (section === 'admin') page = admin(main);
  else page = overview(main);
  refresh();
}

// Live pages refresh every two seconds while the tab is visible; an error shows and the next try clears it.
async function refresh() {
  clearTimeout(timer);
  const current = page;
  if (current && current.update && document.visibilityState === 'visible') {
    try {
      await current.update();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return showLogin('The token is no longer accepted.');
      notify(e.message);
    }
  }
  if (current === page) timer = setTimeout(refresh, REFRESH_MS);
}

function showLogin(problem) {
  clearTimeout(timer);
  page = null;
  document.getElementById('nav').hidden = true;
  document.getElementById('signout').hidden = true;
  document.getElementById('who').textContent = '';
  const token = h('input', { id: 'token', type: 'password', autocomplete: 'off', required: true });
  const error = h('p', { class: 'error-text', id: 'login-error', role: 'alert' }, problem || '');
  clear(main).append(h('div', { class: 'panel login' },
    h('h1', null, 'Sign in'),
    h('p', { class: 'muted' }, 'Paste a token from the server\'s configuration. The console shows and does what its role allows.'),
    h('form', { id: 'login', onsubmit: async (e) => {
      e.preventDefault();
      signIn(token.value.trim());
      try { await start(); } catch (err) { signIn(null); error.textContent = err.message; }
    } }, field('Token', token), h('p', null, h('button', { type: 'submit' }, 'Sign in'))),
    error));
  token.focus();
}

async function start() {
  session.me = await api('/v1/whoami');
  document.getElementById('who').textContent = `${session.me.name} · ${session.me.role}`;
  document.getElementById('nav').hidden = false;
  document.getElementById('nav-admin').hidden = !may('manage');
  document.getElementById('signout').hidden = session.me.name === 'anonymous';
  if (!may('read')) {
    clear(main).append(h('p', { class: 'panel' }, `Role ${session.me.role} may not read the admin API; sign in with an admin, operator or viewer token.`));
    return;
  }
  route();
}

function theme() {
  const saved = localStorage.getItem('boxline-theme');
  if (saved) document.documentElement.dataset.theme = saved;
  document.getElementById('theme').addEventListener('click', () => {
    const dark = document.documentElement.dataset.theme
      ? document.documentElement.dataset.theme === 'dark'
      : matchMedia('(prefers-color-scheme: dark)').matches;
    document.documentElement.dataset.theme = dark ? 'light' : 'dark';
    localStorage.setItem('boxline-theme', document.documentElement.dataset.theme);
  });
}

window.addEventListener('hashchange', () => { if (session.me) route(); });
document.addEventListener('visibilitychange', () => { if (document.visibilityState === 'visible' && page) refresh(); });
document.getElementById('signout').addEventListener('click', () => { signIn(null); session.me = null; showLogin(); });
theme();
start().catch((e) => showLogin(e instanceof ApiError && e.status === 401 ? (session.token ? e.message : '') : e.message));
