"""A griffe extension for the API page (``docs/api.md``, ``mkdocs.yml``): the docstrings'
Sphinx roles as links.

The package's docstrings name other objects the Sphinx way (:func:`choose`,
``:class:`~belote_p2p.errors.RemoteProtocolError```, ``:meth:`TableSession.chat <path>```);
mkdocstrings renders docstrings as Markdown, where a role would show as its raw text. Before
rendering, each role becomes an *optional* cross-reference of mkdocs-autorefs: a link where the
object it names is on the site, plain code where it is not (an internal helper), never a
warning, so that the strict build stays quiet. A name is resolved in the scope of the
docstring that holds it, as Python would (:meth:`apply` in a method of ``State`` is
``State.apply``). A paragraph ending in ``::`` (reST's literal block) ends in ``:``, the
indented block after it becoming a fenced code block (:func:`literal_blocks`).

Nothing is imported: griffe reads the source (static analysis), and this only edits the text
of the docstrings it found.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:func|class|data|attr|meth|mod|exc|obj|const):`(?P<body>[^`]+)`")
EXPLICIT = re.compile(r"(?P<title>.*?)\s*<(?P<target>[^<>]+)>", re.DOTALL)
PACKAGES = ("belote_p2p", "belote_bots")


def objects(root: griffe.Object) -> Iterator[griffe.Object]:
    """``root`` and every object defined under it (aliases are another object's)."""
    yield root
    for member in root.members.values():
        if not member.is_alias:
            yield from objects(member)  # type: ignore[arg-type]


def resolve(scope: griffe.Object, target: str) -> str | None:
    """The full path of ``target`` as named in ``scope``'s docstring, or ``None``."""
    target = target.lstrip(".")
    if target.startswith(PACKAGES):
        return target
    head, _dot, rest = target.partition(".")
    try:
        path = scope.resolve(head)
    except Exception:  # griffe's NameResolutionError, or a name it cannot follow
        return None
    return f"{path}.{rest}" if rest else path


def link(scope: griffe.Object, body: str) -> str:
    body = " ".join(body.split())
    explicit = EXPLICIT.fullmatch(body)
    if explicit:
        title, target = explicit["title"], explicit["target"]
    else:
        target = body.lstrip("!")
        title = target.rsplit(".", 1)[-1] if target.startswith("~") else target
        target = target.lstrip("~")
    code = f"<code>{html.escape(title)}</code>"
    path = None if body.startswith("!") else resolve(scope, target)
    if path is None:
        return code
    return f'<autoref identifier="{html.escape(path)}" optional>{code}</autoref>'


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def literal_blocks(text: str) -> str:
    """reST's literal blocks (a paragraph ending in ``::``, then an indented block) as
    Markdown's fenced code blocks; one in a list item is fenced at the item's content column
    (four spaces, where reST takes any), so that the list goes on after it."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.rstrip().endswith("::") or i + 1 >= len(lines) or lines[i + 1].strip():
            out.append(line)
            i += 1
            continue
        base = indent_of(line)
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or indent_of(lines[end]) > base):
            end += 1
        block = lines[i + 1 : end]
        while block and not block[-1].strip():
            block.pop()
        while block and not block[0].strip():
            block.pop(0)
        if not block:
            out.append(line)
            i += 1
            continue
        head = line.rstrip()[:-2].rstrip()
        out.append(f"{head}:" if head.strip() else "")
        left = min(indent_of(b) for b in block if b.strip())
        fence = " " * (-(-base // 4) * 4)
        out += ["", f"{fence}```"]
        out += [f"{fence}{b[left:]}" if b.strip() else "" for b in block]
        out += [f"{fence}```", ""]
        i = end
    return "\n".join(out)


def markdown(scope: griffe.Object, text: str) -> str:
    return literal_blocks(ROLE.sub(lambda m: link(scope, m["body"]), text))


class SphinxRoles(griffe.Extension):
    """Every docstring of the package, its roles turned into optional cross-references."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        for obj in objects(pkg):
            if obj.docstring is not None:
                obj.docstring.value = markdown(obj, obj.docstring.value)
