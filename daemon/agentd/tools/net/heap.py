"""Giving the memory a page's conversion freed back to the system.

Converting a 1 MB HTML page takes ``html-to-markdown`` (Rust on the C library's ``malloc``)
about 25 MiB of working memory, in the malloc arena of ``web_fetch``'s converter thread. The
library frees it all, but glibc keeps the pages: its trim threshold rises with the largest
block freed (up to 64 MiB), and blocks still alive higher in the heap pin the free space
under them. Without help the daemon would carry, for good, about the working set of the
largest page it ever converted (measured: +28 MiB retained after a 1 MB page).

:func:`release_free_memory` calls glibc's ``malloc_trim(0)``, which hands the free pages of
every arena back to the kernel (``MADV_DONTNEED``; blocks in use are not moved). ``web_fetch``
calls it in its converter thread after a page of at least :data:`TRIM_FROM_BYTES`, once the
page's copies are freed; smaller pages leave too little to be worth the walk. Where the C
library has no ``malloc_trim`` (musl, macOS) nothing is done.
"""

from __future__ import annotations

from agentd.hardening import libc

TRIM_FROM_BYTES = 256 * 1024
"""A fetched body at least this large is followed by a trim."""


def release_free_memory() -> bool:
    """Return the malloc arenas' free pages to the kernel; False where it cannot be done.
    Takes each arena's lock in turn (a few ms after a 1 MB page): call it off the event
    loop."""
    library = libc()
    trim = getattr(library, "malloc_trim", None) if library is not None else None
    if trim is None:
        return False
    trim(0)
    return True
