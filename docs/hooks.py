"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks``).

- **The vectors' folder as a page.** ``protocol/README.md`` links to ``vectors/``, a folder
  (GitHub lists it); on the site that address would have no page. :func:`on_files` adds one,
  made at build time from the folder itself: every vector and its size.
  ``protocol/*.md`` stay as they are (``docs/protocol`` is a link to ``protocol/``).
- **A module's exports as a table.** ``<!-- exports: belote_p2p.bot -->`` in a page becomes a
  table of the names the module exports (its ``__all__``), each linked to where it is
  documented and with its docstring's first line (:func:`on_page_markdown`), so that the
  module that gathers names for bot authors lists them without a second copy of their
  documentation. griffe reads the source: nothing is imported.
- **No raw role left.** A page whose HTML still shows a Sphinx role (``:class:`` before a
  name: a docstring ``docs/griffe_roles.py`` did not turn into Markdown, or a role written in
  a page by hand) is a warning, so that the strict build refuses it
  (:func:`on_page_content`).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import griffe
from mkdocs.plugins import event_priority, get_plugin_logger
from mkdocs.structure.files import File, Files, InclusionLevel

ROOT = Path(__file__).resolve().parent.parent
VECTORS = "protocol/vectors"
EXPORTS = re.compile(r"^<!-- exports: (?P<module>[\w.]+) -->$", re.MULTILINE)
RAW_ROLE = re.compile(r":(?:py:)?(?:func|class|data|attr|meth|mod|exc|obj|const):(?=<code>|`)")
log = get_plugin_logger(__name__)


def vectors_page(folder: Path) -> str:
    lines = [
        "# The test vectors",
        "",
        "The files of the repository's `protocol/vectors/` folder, as the reference writes them",
        "(each one is checked byte for byte by a test). What each one checks, and in which order",
        "to use them: [Writing a second implementation](../README.md#the-vectors).",
        "",
        "| file | size |",
        "|---|---|",
    ]
    for path in sorted(folder.iterdir()):
        if path.is_file():
            size = path.stat().st_size
            shown = f"{size / 1024:,.1f} KiB" if size >= 1024 else f"{size} bytes"
            lines.append(f"| `{path.name}` | {shown} |")
    return "\n".join(lines) + "\n"


@event_priority(-101)  # after the i18n plugin (-100) has sorted the pages by language
def on_files(files: Files, config: Any) -> Files:
    index = f"{VECTORS}/index.md"
    if files.get_file_from_path(index) is None:
        content = vectors_page(Path(config["docs_dir"]) / VECTORS)
        # included, though exclude_docs leaves the folder's own files out
        page = File.generated(config, index, content=content, inclusion=InclusionLevel.INCLUDED)
        prefix = language_folder(config)
        if prefix:
            page.dest_uri = f"{prefix}/{page.dest_uri}"
        files.append(page)
    return files


def language_folder(config: Any) -> str:
    """The folder of the language being built (``fr``), empty for the default one."""
    i18n = config["plugins"].get("i18n")
    if i18n is None or i18n.current_language == i18n.default_language:
        return ""
    return str(i18n.current_language)


@cache
def package(name: str) -> griffe.Object:
    # the same docstrings as the API page's, their roles turned into links
    roles = griffe.load_extensions(f"{ROOT / 'docs' / 'griffe_roles.py'}:SphinxRoles")
    return griffe.load(name, search_paths=[str(ROOT)], resolve_aliases=True, extensions=roles)


def summary(obj: griffe.Object | griffe.Alias) -> str:
    """The docstring's first paragraph; for a constant without one, its value, if short."""
    docstring = obj.docstring.value if obj.docstring else ""
    first = " ".join(docstring.strip().split("\n\n")[0].split())
    if not first and obj.is_attribute and obj.value is not None:
        value = " ".join(str(obj.value).split())
        first = f"`{value}`" if len(value) <= 60 else ""
    # a pipe would end the table's cell; in a code span it does not (Python-Markdown)
    parts = re.split(r"(`[^`]*`)", first)
    return "".join(p if p.startswith("`") else p.replace("|", "\\|") for p in parts)


def exports_table(module_path: str) -> str:
    top = package(module_path.split(".")[0])
    module = top if module_path == top.path else top[module_path.split(".", 1)[1]]
    rows = ["| name | what it is |", "|---|---|"]
    for name in sorted(module.exports or (), key=str.lower):
        member = module.members[str(name)]
        target = member.final_target if member.is_alias else member
        rows.append(
            f'| <autoref identifier="{target.path}" optional><code>{name}</code></autoref> '
            f"| {summary(target)} |"
        )
    return "\n".join(rows)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    return EXPORTS.sub(lambda m: exports_table(m["module"]), markdown)


def on_page_content(html: str, page: Any, config: Any, files: Files) -> str:
    for found in sorted(set(RAW_ROLE.findall(html))):
        log.warning(f"{page.file.src_uri}: a Sphinx role left as text ({found})")
    return html
