// @ts-check
// What an empty chat says to do: a note above the conversation, one paragraph per line, hidden
// as soon as the conversation has an item (and shown again when it is empty: a new chat, a
// rewind to the start). Each host says it in its own words (the web page, VS Code).

/**
 * @param {HTMLElement} chatRoot the element the chat was mounted in
 * @param {string[]} lines
 */
export function showEmptyHint(chatRoot, lines) {
  const log = /** @type {HTMLElement | null} */ (chatRoot.querySelector('.log'));
  if (!log?.parentElement) return;
  const hint = document.createElement('div');
  hint.className = 'empty-hint';
  hint.setAttribute('role', 'note');
  for (const text of lines) {
    const line = document.createElement('p');
    line.textContent = text;
    hint.appendChild(line);
  }
  log.parentElement.insertBefore(hint, log);
  const update = () => {
    hint.hidden = Boolean(log.querySelector('.item'));
  };
  new MutationObserver(update).observe(log, { childList: true });
  update();
}
