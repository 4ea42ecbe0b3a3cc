import { clear } from './dom.js';

// The status line under the header: errors in red, confirmations in green.
export function notify(message, ok = false) {
  const el = document.getElementById('status');
  el.className = 'status' + (ok ? ' info' : '');
  el.textContent = message || '';
}

// Asks before a change, saying what it affects; resolves true on Confirm.
export function confirmAction(text, okLabel = 'Confirm') {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = okLabel;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.returnValue = '';
    dialog.showModal();
    document.getElementById('confirm-cancel').focus();
  });
}

export { clear };
