// @ts-check
// The question card: the agent (the `ask_user` tool, an MCP server) asks the user, on the card
// of the call that asks. Per question its header chip and text, its options as buttons (one
// choice: pressed/unpressed) or checkboxes (`multiSelect`), and a line for an answer of one's
// own ("Other"); then "Answer" (enabled once every question has a choice or a text) and
// "Skip" (declines). A URL-mode question shows the address; nothing is opened unless the user
// picks "Open it", and then only in a new tab. Once settled, the card shows what was answered
// (or why not).

/**
 * @param {string} tag @param {string} className @param {string} [text]
 * @returns {HTMLElement}
 */
function el(tag, className, text) {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** @typedef {{label: string, description?: string | null}} Option */
/** @typedef {{question: string, header?: string, options: Option[], multiSelect?: boolean}} Question */
/** @typedef {{selected: string[], other: string | null}} Answer */

/**
 * One question's controls; `read()` gives its answer (null: nothing chosen nor written).
 * @param {Question} question @param {number} number @param {() => void} changed
 */
function questionNodes(question, number, changed) {
  const box = el('fieldset', 'ask-one');
  const legend = el('legend', 'ask-text');
  if (question.header) legend.append(el('span', 'ask-header', question.header), ' ');
  legend.append(question.question);
  box.append(legend);
  const options = el('div', 'ask-options');
  /** @type {Set<string>} */
  const chosen = new Set();
  for (const option of question.options) {
    const label = option.label;
    if (question.multiSelect) {
      const row = /** @type {HTMLLabelElement} */ (el('label', 'ask-check'));
      const box = /** @type {HTMLInputElement} */ (document.createElement('input'));
      box.type = 'checkbox';
      box.value = label;
      box.addEventListener('change', () => {
        if (box.checked) chosen.add(label);
        else chosen.delete(label);
        changed();
      });
      row.append(box, ` ${label}`);
      if (option.description) row.append(el('span', 'ask-about', ` ${option.description}`));
      options.append(row);
    } else {
      const button = /** @type {HTMLButtonElement} */ (el('button', 'btn ask-option', label));
      button.type = 'button';
      button.setAttribute('aria-pressed', 'false');
      if (option.description) button.title = option.description;
      button.addEventListener('click', () => {
        chosen.clear();
        chosen.add(label);
        for (const other of options.querySelectorAll('.ask-option')) other.setAttribute('aria-pressed', String(other === button));
        changed();
      });
      options.append(button);
    }
  }
  const other = /** @type {HTMLInputElement} */ (document.createElement('input'));
  other.className = 'ask-other';
  other.type = 'text';
  other.placeholder = question.options.length ? 'Other: your own answer' : 'Your answer';
  other.setAttribute('aria-label', `${question.header || `Question ${number}`}: your own answer`);
  other.addEventListener('input', changed);
  box.append(options, other);
  /** @returns {Answer | null} */
  const read = () => {
    const text = other.value.trim();
    if (!chosen.size && !text) return null;
    const order = question.options.map((o) => o.label).filter((label) => chosen.has(label));
    return { selected: order, other: text || null };
  };
  return { box, read };
}

/** What a settled question shows: the answers, or why there are none. */
function settledText(/** @type {import('./reducer.js').Asked} */ asked) {
  if (!asked.answers) return `Not answered: ${asked.reason ?? 'no answer'}`;
  return asked.answers
    .map((answer, n) => {
      const head = asked.questions[n]?.header || asked.questions[n]?.question || `Question ${n + 1}`;
      const picked = [...(answer.selected ?? []), ...(answer.other ? [answer.other] : [])];
      return `${head}: ${picked.join(', ')}`;
    })
    .join(' · ');
}

/**
 * Fill the card's question box for `asked` (pending: the form; settled: what was answered).
 * @param {HTMLElement} box @param {import('./reducer.js').Asked | null | undefined} asked
 * @param {(questionId: string, answers: Answer[] | null) => void} answer
 */
export function updateQuestion(box, asked, answer) {
  box.hidden = !asked;
  if (!asked) return;
  const state = `${asked.questionId}:${asked.pending}`;
  if (box.dataset.state === state) return;
  box.dataset.state = state;
  if (!asked.pending) {
    box.replaceChildren(el('div', 'ask-settled', settledText(asked)));
    return;
  }
  const form = /** @type {HTMLFormElement} */ (el('form', 'ask-form'));
  form.setAttribute('aria-label', 'The agent asks you');
  if (asked.url) {
    const link = el('div', 'ask-url');
    link.append(asked.server ? `${asked.server} asks you to open ` : 'Open ', el('code', 'ask-address', asked.url));
    form.append(link);
  }
  const send = /** @type {HTMLButtonElement} */ (el('button', 'btn btn--primary ask-send', 'Answer'));
  send.type = 'submit';
  send.disabled = true;
  const parts = asked.questions.map((question, n) =>
    questionNodes(question, n + 1, () => {
      send.disabled = parts.some((part) => part.read() === null);
    }));
  form.append(...parts.map((part) => part.box));
  const skip = /** @type {HTMLButtonElement} */ (el('button', 'btn btn--quiet ask-skip', 'Skip'));
  skip.type = 'button';
  skip.addEventListener('click', () => answer(asked.questionId, null));
  const row = el('div', 'approval-choices');
  row.append(send, skip);
  form.append(row);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const answers = parts.map((part) => part.read());
    if (answers.some((a) => a === null)) return;
    const chosen = /** @type {Answer[]} */ (answers);
    if (asked.url && chosen[0]?.selected[0] === asked.questions[0]?.options[0]?.label) {
      window.open(asked.url, '_blank', 'noopener,noreferrer');
    }
    answer(asked.questionId, chosen);
  });
  box.replaceChildren(form);
  const active = /** @type {HTMLElement | null} */ (box.ownerDocument.activeElement);
  const typing = active instanceof HTMLTextAreaElement && active.value !== '';
  if (!typing) /** @type {HTMLElement | null} */ (form.querySelector('button, input'))?.focus();
}
