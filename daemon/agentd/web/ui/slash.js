// @ts-check
// Slash commands in the composer. A message starting with `/NAME` is a command, never a prompt
// about it: the chat's own commands (BUILT_INS: /clear, /fork, /compact, /model, /help) run in
// the page; any other name is a custom command of the session (`session/commands`), sent as a
// prompt that agentd expands (an unknown name comes back as an error listing the known ones).
// A built-in wins over a custom command of the same name (the menu leaves such a one out).
//
// Typing `/` opens a menu above the message box listing the commands whose names start with
// what follows; ↑/↓ move, Enter or Tab picks (the name goes into the box), Esc closes.

import { el } from './items.js';

/**
 * @typedef {{name: string, description: string, argumentHint?: string | null,
 *   source: 'built-in' | 'user' | 'project'}} SlashCommand
 */

/** @type {SlashCommand[]} */
export const BUILT_INS = [
  { name: 'clear', description: 'Start a new chat', argumentHint: null, source: 'built-in' },
  { name: 'fork', description: 'Continue in a new session from here', argumentHint: null, source: 'built-in' },
  { name: 'compact', description: 'Summarise older messages to free context', argumentHint: '[INSTRUCTIONS]', source: 'built-in' },
  { name: 'model', description: 'Switch the model', argumentHint: 'PROVIDER/MODEL', source: 'built-in' },
  { name: 'help', description: 'List the commands', argumentHint: null, source: 'built-in' },
];

const INVOCATION = /^\/([A-Za-z0-9][A-Za-z0-9_-]{0,63})(?:\s+([\s\S]*))?$/;

/**
 * The command `text` invokes, or null for an ordinary message (`/etc/hosts is…` is one).
 * @param {string} text
 * @returns {{name: string, args: string, builtIn: boolean} | null}
 */
export function parseCommand(text) {
  const match = INVOCATION.exec(text.trim());
  if (!match) return null;
  return { name: match[1], args: (match[2] ?? '').trim(), builtIn: BUILT_INS.some((c) => c.name === match[1]) };
}

/**
 * The menu's entries for the box's `text` (null: no menu, the text is not a `/` name being typed).
 * @param {string} text
 * @param {SlashCommand[]} custom
 * @returns {SlashCommand[] | null}
 */
export function menuEntries(text, custom) {
  const match = /^\/([A-Za-z0-9_-]*)$/.exec(text);
  if (!match) return null;
  const prefix = match[1].toLowerCase();
  const own = new Set(BUILT_INS.map((c) => c.name));
  const all = [...BUILT_INS, ...custom.filter((c) => !own.has(c.name))];
  return all.filter((c) => c.name.toLowerCase().startsWith(prefix));
}

/**
 * The `/` menu of a message box: call `sync()` after the box's text changes (the menu listens
 * to `input` itself) and `handleKey(event)` first in the box's keydown handler (true: the key
 * was the menu's).
 * @param {HTMLTextAreaElement} input
 */
export function slashMenu(input) {
  const list = el('ul', 'slash-menu');
  list.id = `slash-menu-${Math.random().toString(36).slice(2)}`;
  list.setAttribute('role', 'listbox');
  list.setAttribute('aria-label', 'Commands');
  list.hidden = true;
  input.setAttribute('aria-controls', list.id);
  input.setAttribute('aria-autocomplete', 'list');
  /** @type {SlashCommand[]} */
  let custom = [];
  /** @type {SlashCommand[]} */
  let shown = [];
  let active = 0;

  function render() {
    list.replaceChildren();
    shown.forEach((command, index) => {
      const row = el('li', `slash-item${index === active ? ' slash-item--active' : ''}`);
      row.id = `${list.id}-${index}`;
      row.setAttribute('role', 'option');
      row.setAttribute('aria-selected', String(index === active));
      const name = el('span', 'slash-name', `/${command.name}`);
      const hint = el('span', 'slash-hint', command.argumentHint ?? '');
      const description = el('span', 'slash-description', command.description);
      const source = el('span', `slash-source slash-source--${command.source}`, command.source);
      row.append(name, hint, description, source);
      row.addEventListener('mousedown', (event) => {
        event.preventDefault(); // keep the focus in the box
        pick(index);
      });
      list.appendChild(row);
    });
    list.hidden = shown.length === 0;
    input.setAttribute('aria-expanded', String(!list.hidden));
    if (list.hidden) input.removeAttribute('aria-activedescendant');
    else input.setAttribute('aria-activedescendant', `${list.id}-${active}`);
  }

  function sync() {
    const entries = menuEntries(input.value, custom) ?? [];
    const same = entries.length === shown.length && entries.every((c, i) => c === shown[i]);
    if (!same) active = 0;
    shown = entries;
    render();
  }

  function pick(index) {
    const command = shown[index];
    if (!command) return;
    input.value = `/${command.name} `;
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
    sync();
  }

  /** @param {KeyboardEvent} event */
  function handleKey(event) {
    if (list.hidden || event.isComposing) return false;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      const step = event.key === 'ArrowDown' ? 1 : -1;
      active = (active + step + shown.length) % shown.length;
      render();
    } else if (event.key === 'Enter' && !event.shiftKey && input.value === `/${shown[active]?.name}`) {
      shown = []; // the whole name typed: Enter sends it
      render();
      return false;
    } else if ((event.key === 'Enter' && !event.shiftKey) || event.key === 'Tab') {
      pick(active);
    } else if (event.key === 'Escape') {
      shown = [];
      render();
    } else {
      return false;
    }
    event.preventDefault();
    event.stopPropagation();
    return true;
  }

  input.addEventListener('input', sync);
  input.addEventListener('blur', () => {
    shown = [];
    render();
  });
  return {
    list,
    sync,
    handleKey,
    /** Open the menu with every command (`/help`). */
    showAll() {
      input.value = '/';
      input.focus();
      sync();
    },
    /** @param {SlashCommand[]} commands the session's custom commands */
    setCommands(commands) {
      custom = commands;
      if (!list.hidden) sync();
    },
    get open() {
      return !list.hidden;
    },
  };
}
