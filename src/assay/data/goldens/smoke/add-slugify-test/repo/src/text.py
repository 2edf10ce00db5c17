"""Text helpers: slugs for URLs and word-based truncation for summaries."""

import re
import unicodedata

_NOT_WORD = re.compile(r"[^a-z0-9]+")


def slugify(s: str) -> str:
    """A URL-safe slug: accents folded to ASCII, lower case, words joined by '-'.

    slugify("Hello, World!") == "hello-world"; a string without letters or digits gives "".
    """
    folded = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode("ascii")
    return _NOT_WORD.sub("-", folded.lower()).strip("-")


def truncate_words(s: str, n: int) -> str:
    """The first ``n`` words of ``s``, followed by an ellipsis when words were cut."""
    if n < 0:
        raise ValueError("n must be >= 0")
    words = s.split()
    if len(words) <= n:
        return " ".join(words)
    return " ".join(words[:n]) + "…"
