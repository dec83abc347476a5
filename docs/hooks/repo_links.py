"""MkDocs hooks: the site is the repository's Markdown as it is on disk.

Every Markdown file links relative to itself, as a Git host shows it. The site is ``docs/``,
plus the top-level ``README.md`` as its home page, plus every other Markdown file of the
repository those pages link to, directly or through each other (the package READMEs, the
generated references in ``schemas/``), each built under ``repo/`` at its own path.

``on_page_markdown`` maps every relative link to the page it names on the site, so
``mkdocs build --strict`` checks each link and its anchor as it checks any other. A link to a
file that is not Markdown (a source file, a folder without a README) keeps its text only, as
long as the file exists; a link to a path that does not exist, or that leaves the repository,
is a warning, which fails the strict build.
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Iterator
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[2]
HOME = "README.md"
EXTRA_PREFIX = "repo/"
log = logging.getLogger("mkdocs.hooks.repo_links")

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_SPAN_OR_LINK = re.compile(
    r"(?P<code>(?P<ticks>`+)[\s\S]+?(?P=ticks))"
    r"|(?P<link>(?P<bang>!?)\[(?P<text>(?:[^\[\]]|\[[^\]]*\])*)\]"
    r"\((?P<target>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\))"
)
_EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|#|/)", re.I)

# repository path of a page → its src_uri on the site, filled by on_files
_site: dict[str, str] = {}


def _prose(markdown: str) -> Iterator[tuple[bool, str]]:
    """The text in order as (is_prose, chunk): fenced code blocks are not prose."""
    chunk: list[str] = []
    fence = ""
    for line in markdown.splitlines(keepends=True):
        opened = _FENCE.match(line)
        if not fence and opened:
            yield True, "".join(chunk)
            chunk, fence = [line], opened[1]
        elif fence and line.strip().startswith(fence) and not line.strip().strip(fence[0]):
            chunk.append(line)
            yield False, "".join(chunk)
            chunk, fence = [], ""
        else:
            chunk.append(line)
    yield not fence, "".join(chunk)


def _targets(markdown: str) -> Iterator[str]:
    """Every inline link target in the prose of ``markdown``."""
    for is_prose, chunk in _prose(markdown):
        if is_prose:
            for match in _SPAN_OR_LINK.finditer(chunk):
                if match["link"]:
                    yield match["target"]


def _resolve(page: str, path: str) -> str:
    """``path`` (relative to the repository file ``page``) as a repository path."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(page), path))


def _as_page(path: str) -> str | None:
    """The repository Markdown file a resolved link names (a folder names its README)."""
    if path.endswith(".md") and (ROOT / path).is_file():
        return path
    readme = posixpath.join(path, "README.md")
    return readme if (ROOT / path).is_dir() and (ROOT / readme).is_file() else None


def _collect(docs: list[str]) -> dict[str, str]:
    """Repository path → src_uri of every page: docs/, the home page, what they link to."""
    site = {path: path.removeprefix("docs/") for path in docs}
    site[HOME] = "index.md"
    todo = list(site)
    while todo:
        page = todo.pop()
        for target in _targets((ROOT / page).read_text(encoding="utf-8")):
            if _EXTERNAL.match(target):
                continue
            found = _as_page(_resolve(page, target.partition("#")[0]))
            if found and found not in site and "node_modules" not in found:
                site[found] = EXTRA_PREFIX + found
                todo.append(found)
    return site


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the home page and the repository's Markdown the docs link to."""
    docs = [f"docs/{file.src_uri}" for file in files if file.src_uri.endswith(".md")]
    _site.clear()
    _site.update(_collect(docs))
    for path, uri in _site.items():
        if not path.startswith("docs/"):
            files.append(File.generated(config, uri, abs_src_path=str(ROOT / path)))
    return files


def _rewrite(page: str, uri: str, match: re.Match[str]) -> str:
    """One link of the page at repository path ``page`` (site ``uri``), as the site needs it."""
    target = match["target"]
    if _EXTERNAL.match(target):
        return match[0]
    path, hash_, anchor = target.partition("#")
    resolved = _resolve(page, path)
    found = _as_page(resolved)
    if resolved.startswith("../"):
        log.warning("%s: the link %s leaves the repository", page, target)
    elif found in _site:
        link = posixpath.relpath(_site[found], posixpath.dirname(uri) or ".")
        return f"{match['bang']}[{match['text']}]({link}{hash_}{anchor}{match['title'] or ''})"
    elif (ROOT / resolved).exists():
        return match["text"]
    else:
        log.warning("%s: the link %s names no file", page, target)
    return match[0]


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, files: Files) -> str:
    """The page's relative links, pointed at the pages they name on the site."""
    uri = page.file.src_uri
    source = next((path for path, site_uri in _site.items() if site_uri == uri), f"docs/{uri}")
    out = []
    for is_prose, chunk in _prose(markdown):
        if is_prose:
            chunk = _SPAN_OR_LINK.sub(
                lambda m: _rewrite(source, uri, m) if m["link"] else m[0], chunk
            )
        out.append(chunk)
    return "".join(out)
