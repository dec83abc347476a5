// @ts-check
// What a new chat says when no provider is configured: the exact lines that configure one, the
// variables that do, and the built-in mock model (pick it in the model picker, or start the
// daemon with `--provider mock`). Shown in the empty log of a new chat while the daemon
// reports no default provider, and after a "no provider" error.

/** The help's sections: a title and the lines to copy. */
export const PROVIDER_HELP = [
  {
    title: 'In your config file, ~/.config/agentd/config.toml (an OpenAI-compatible server: Ollama, vLLM, LiteLLM…):',
    lines: ['provider = "local"', 'model = "llama3"', '', '[providers.local]', 'api = "openai"', 'base_url = "http://localhost:11434/v1"'],
  },
  {
    title: 'Or in the environment of the daemon, before it starts:',
    lines: ['export OPENAI_API_KEY=…        # or ANTHROPIC_API_KEY=…'],
  },
  {
    title: 'Or try the built-in offline mock model: choose mock/mock-model above, or start the daemon with',
    lines: ['agentd serve --http --provider mock'],
  },
];

/**
 * The help as an element (a `<section>` with a heading, and each part's lines in a `<pre>`).
 * @param {Document} doc
 * @returns {HTMLElement}
 */
export function providerHelp(doc) {
  const section = doc.createElement('section');
  section.className = 'provider-help';
  section.setAttribute('aria-label', 'Configure a provider');
  const heading = doc.createElement('h2');
  heading.textContent = 'No LLM provider is configured';
  section.appendChild(heading);
  for (const part of PROVIDER_HELP) {
    const text = doc.createElement('p');
    text.textContent = part.title;
    const pre = doc.createElement('pre');
    pre.textContent = part.lines.join('\n');
    section.append(text, pre);
  }
  const after = doc.createElement('p');
  after.textContent =
    'The config file is read for each new session: save it and send your message again. '
    + 'Environment variables are read when the daemon starts: restart it (agentctl daemon stop, then agentctl web).';
  section.appendChild(after);
  return section;
}
