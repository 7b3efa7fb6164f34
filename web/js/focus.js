// Keeping the keyboard's place across a re-render: a panel that rebuilds its HTML replaces the element that
// has focus, and the browser then puts focus on <body>, so the next Tab starts over from the page's top (a
// keyboard trap in a long list). The focused element is found again in the new HTML by the same key (its id,
// else its first data-* attribute inside the nearest ancestor with an id) and focused without scrolling.

/** A selector that finds `el` again after its container's HTML is rebuilt; null where nothing identifies it. */
export function focusKey(el) {
  if (!el || el === document.body || !el.isConnected) return null;
  if (el.id) return `#${CSS.escape(el.id)}`;
  const scope = el.parentElement?.closest('[id]');
  const data = Object.keys(el.dataset)[0];
  if (!scope || data == null) return null;
  const attribute = `data-${data.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  return `#${CSS.escape(scope.id)} [${attribute}="${CSS.escape(el.dataset[data])}"]`;
}

/** Runs `render`; where it replaced the focused element, focuses its replacement (with the text caret where it was). */
export function keepFocus(render) {
  const before = document.activeElement;
  const key = focusKey(before);
  const caret = key && typeof before.selectionStart === 'number' ? [before.selectionStart, before.selectionEnd] : null;
  render();
  if (!key || before.isConnected) return;
  const after = document.querySelector(key);
  if (!after) return;
  after.focus({ preventScroll: true });
  if (caret && typeof after.setSelectionRange === 'function') {
    try {
      after.setSelectionRange(...caret);
    } catch {
      // number inputs have no caret to restore
    }
  }
}
