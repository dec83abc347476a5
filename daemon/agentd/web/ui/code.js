// @ts-check
// Code blocks of rendered (already sanitised) Markdown: a "Copy" button on each and syntax
// highlighting for those that name their language (```py …```).
//
// Highlighting runs in a Web Worker (highlight-worker.js, which loads the vendored
// highlight.js); its markup comes back cut into runs of 100 lines (codesplit.js). The page's
// main thread puts each run's markup in only when the run comes near the screen (an
// IntersectionObserver; until then it is plain text), so a 2,000-line block costs the page a
// few milliseconds, not the highlighter's hundreds and the DOM of 30,000 spans
// (bench_web_highlight).
// Where a worker cannot start (a host whose scripts are bundled, a webview), the highlighter is
// imported on the main thread and only blocks up to MAIN_THREAD_CHARS are highlighted; larger
// ones stay plain text. Blocks without a language, or in one the highlighter does not know,
// stay plain. The worker's HTML is highlight.js's output for the code as text (it escapes the
// code); the worker refuses any output with markup other than its `<span class="hljs-…">`.
//
// What this module adds or takes over (the wrapper, the button, the `<pre>` seen, the `<code>`
// highlighted) is recorded in `ownNodes`, a WeakSet markup cannot write to.

import { splitHighlighted, splitText } from './codesplit.js';

/** Largest block highlighted on the main thread when no worker is available. */
const MAIN_THREAD_CHARS = 20_000;
/** Largest block highlighted at all (larger ones stay plain). */
const MAX_CHARS = 1_000_000;
/** A code line's height in em (style.css: `.md pre` has line-height 1.5). */
const LINE_EM = 1.5;
/** How far from the screen a run of lines gets its highlighting. */
const NEAR_SCREEN = '800px 0px';

/** Elements this module added or took over (each `<pre>` is enhanced once). */
export const ownNodes = new WeakSet();

/** @type {Worker | null} */
let worker = null;
let workerBroken = false;
let nextId = 1;
/** @type {Map<number, {code: HTMLElement, text: string, language: string}>} */
const waiting = new Map();
/** @type {Promise<any> | null} */
let mainThreadHighlighter = null;

/**
 * Give every `<pre>` under `container` not yet seen a copy button, and start highlighting the
 * ones with a `language-*` class. Idempotent per element.
 * @param {HTMLElement} container
 */
export function enhanceCode(container) {
  for (const pre of /** @type {NodeListOf<HTMLElement>} */ (container.querySelectorAll('pre'))) {
    if (ownNodes.has(pre)) continue;
    ownNodes.add(pre);
    const code = /** @type {HTMLElement | null} */ (pre.querySelector(':scope > code'));
    addCopyButton(pre, code ?? pre);
    const language = code ? languageOf(code) : null;
    if (code && language) highlight(code, language);
  }
}

/** @param {HTMLElement} code @returns {string | null} */
function languageOf(code) {
  for (const name of code.classList) if (name.startsWith('language-')) return name.slice(9).toLowerCase();
  return null;
}

/** @param {HTMLElement} pre @param {HTMLElement} source */
function addCopyButton(pre, source) {
  const doc = pre.ownerDocument;
  const box = doc.createElement('div');
  box.className = 'code-block';
  const button = doc.createElement('button');
  button.type = 'button';
  button.className = 'code-copy';
  button.textContent = 'Copy';
  button.setAttribute('aria-label', 'Copy the code');
  button.addEventListener('click', () => {
    copyText(source).then(
      () => flash(button, 'Copied'),
      () => flash(button, 'Copy failed'),
    );
  });
  ownNodes.add(box);
  ownNodes.add(button);
  pre.replaceWith(box);
  box.append(button, pre);
}

/** @param {HTMLElement} button @param {string} text */
function flash(button, text) {
  button.textContent = text;
  setTimeout(() => {
    button.textContent = 'Copy';
  }, 1500);
}

/**
 * Copy `source`'s text: the Clipboard API where the page may use it (a secure context: https
 * or loopback), else the selection and `execCommand('copy')`.
 * @param {HTMLElement} source
 */
async function copyText(source) {
  const text = (source.textContent ?? '').replace(/\n$/, ''); // marked ends blocks with one
  if (globalThis.navigator?.clipboard && globalThis.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const selection = source.ownerDocument.getSelection();
  const range = source.ownerDocument.createRange();
  range.selectNodeContents(source);
  selection?.removeAllRanges();
  selection?.addRange(range);
  const done = source.ownerDocument.execCommand('copy');
  selection?.removeAllRanges();
  if (!done) throw new Error('copy refused');
}

/** @param {HTMLElement} code @param {string} language */
function highlight(code, language) {
  const text = code.textContent ?? '';
  if (!text || text.length > MAX_CHARS) return;
  const runner = workerBroken ? null : startWorker();
  if (runner) {
    const id = nextId++;
    waiting.set(id, { code, text, language });
    runner.postMessage({ id, code: text, language });
  } else {
    highlightHere(code, text, language);
  }
}

/** The highlighting worker, started on first use; null where workers cannot run. */
function startWorker() {
  if (worker) return worker;
  try {
    worker = new Worker(new URL('./highlight-worker.js', import.meta.url), { type: 'module' });
  } catch {
    workerBroken = true;
    return null;
  }
  worker.addEventListener('message', (event) => {
    const job = waiting.get(event.data.id);
    waiting.delete(event.data.id);
    if (job && Array.isArray(event.data.runs)) swapIn(job.code, job.text, event.data.runs);
  });
  worker.addEventListener('error', () => {
    // It could not load (a bundled host): highlight what waits here, and everything after.
    workerBroken = true;
    worker = null;
    const jobs = [...waiting.values()];
    waiting.clear();
    for (const job of jobs) highlightHere(job.code, job.text, job.language);
  });
  return worker;
}

/** @param {HTMLElement} code @param {string} text @param {string} language */
function highlightHere(code, text, language) {
  if (text.length > MAIN_THREAD_CHARS) return;
  mainThreadHighlighter ??= import('./vendor/highlight.min.js').then((module) => module.default);
  mainThreadHighlighter.then(
    (hljs) => {
      if (!hljs.getLanguage(language)) return;
      swapIn(code, text, splitHighlighted(hljs.highlight(text, { language, ignoreIllegals: true }).value));
    },
    () => {},
  );
}

/**
 * Put the highlighted `runs` into `code` if it still shows `text` (a re-render may have replaced
 * it): the text becomes one plain `span.code-run` per run, and each run gets its markup when
 * it comes near the screen.
 * @param {HTMLElement} code @param {string} text @param {string[]} runs
 */
function swapIn(code, text, runs) {
  if (!code.isConnected || code.textContent !== text) return;
  const plain = splitText(text);
  if (plain.length !== runs.length) return;
  performance.mark('agentd-highlight-start');
  const doc = code.ownerDocument;
  const parts = plain.map((run) => {
    const part = doc.createElement('span');
    part.className = 'code-run';
    part.textContent = run;
    // Its height while skipped (content-visibility): its own lines, so nothing moves when it
    // is drawn (CSSOM, which the page's style-src allows, unlike style attributes).
    part.style.containIntrinsicBlockSize = `auto ${lineCount(run) * LINE_EM}em`;
    return part;
  });
  code.replaceChildren(...parts);
  code.classList.add('hljs');
  ownNodes.add(code);
  const near = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      const part = /** @type {HTMLElement} */ (entry.target);
      near.unobserve(part);
      performance.mark('agentd-highlight-start');
      part.innerHTML = runs[parts.indexOf(part)];
      performance.measure('agentd-highlight-run', 'agentd-highlight-start');
    }
  }, { rootMargin: NEAR_SCREEN });
  for (const part of parts) near.observe(part);
  performance.measure('agentd-highlight', 'agentd-highlight-start');
}

/** @param {string} run @returns {number} the lines `run` shows */
function lineCount(run) {
  let count = run.endsWith('\n') ? 0 : 1;
  for (let at = run.indexOf('\n'); at !== -1; at = run.indexOf('\n', at + 1)) count += 1;
  return count;
}
