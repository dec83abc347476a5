"""An ACP prompt (content blocks) → the text and images of an agentd prompt.

- ``text``: as is; several text blocks are joined by blank lines.
- ``image``: an image of the prompt.
- ``resource_link``: a line naming the file (``file://`` URIs as absolute paths) for the
  model to read with its tools.
- ``resource`` (embedded context, an @-mentioned file): its text in a ``<file>`` element
  with its path; a blob resource that is an image becomes an image, any other blob a line
  saying it was attached but cannot be shown.
- ``audio``: refused (not offered in the agent's prompt capabilities).
"""

from __future__ import annotations

from urllib.parse import unquote, urlparse

from agentd.errors import InvalidParams
from agentd.protocol.acp import (
    AudioBlock,
    ContentBlock,
    ImageBlock,
    ResourceBlock,
    ResourceLinkBlock,
    TextBlock,
)
from agentd.protocol.content import ImageContent

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def uri_to_path(uri: str) -> str:
    """A ``file://`` URI as a path; any other URI unchanged."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return unquote(parsed.path)
    return uri


def prompt_parts(blocks: list[ContentBlock]) -> tuple[str, list[ImageContent]]:
    """The prompt text and images (InvalidParams for empty prompts and audio)."""
    texts: list[str] = []
    images: list[ImageContent] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            texts.append(block.text)
        elif isinstance(block, ImageBlock):
            images.append(ImageContent(data=block.data, mime_type=block.mime_type))
        elif isinstance(block, ResourceLinkBlock):
            texts.append(_link_line(block))
        elif isinstance(block, ResourceBlock):
            texts.append(_embedded(block, images))
        elif isinstance(block, AudioBlock):
            raise InvalidParams("audio prompts are not supported (promptCapabilities.audio)")
    text = "\n\n".join(t for t in texts if t)
    if not text.strip() and not images:
        raise InvalidParams("the prompt is empty - at `$.prompt`")
    return text, images


def _link_line(block: ResourceLinkBlock) -> str:
    target = uri_to_path(block.uri)
    label = f" ({block.title or block.description})" if block.title or block.description else ""
    return f"Referenced: {target}{label}"


def _embedded(block: ResourceBlock, images: list[ImageContent]) -> str:
    resource = block.resource
    path = uri_to_path(resource.uri)
    if resource.text is not None:
        text = resource.text if resource.text.endswith("\n") else resource.text + "\n"
        return f'<file path="{path}">\n{text}</file>'
    mime = resource.mime_type or "application/octet-stream"
    if resource.blob is not None and mime in IMAGE_TYPES:
        images.append(ImageContent(data=resource.blob, mime_type=mime))
        return f"Attached image: {path}"
    if resource.blob is None:
        raise InvalidParams("an embedded resource needs `text` or `blob` - at `$.prompt`")
    return f"Attached {path} ({mime}, binary; not shown)"
