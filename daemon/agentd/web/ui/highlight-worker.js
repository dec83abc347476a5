// @ts-check
// The syntax highlighter's worker (see code.js): `{id, code, language}` in, `{id, runs}` out:
// the highlighted markup cut into runs of lines (codesplit.js); `runs` is null for a language
// highlight.js does not know, or for output carrying markup other than highlight.js's own
// spans (it escapes the code it is given: never expected).

import { splitHighlighted } from './codesplit.js';
import hljs from './vendor/highlight.min.js';

/** Markup highlight.js writes: class-only spans, and the entities of escaped text. */
const OWN_MARKUP = /<span class="(?:hljs|language)-[\w-]+(?: [\w-]+)*">|<\/span>/g;

self.addEventListener('message', (event) => {
  const { id, code, language } = event.data;
  let runs = null;
  if (hljs.getLanguage(language)) {
    try {
      const value = hljs.highlight(code, { language, ignoreIllegals: true }).value;
      if (!value.replace(OWN_MARKUP, '').includes('<')) runs = splitHighlighted(value);
    } catch {
      runs = null;
    }
  }
  self.postMessage({ id, runs });
});
