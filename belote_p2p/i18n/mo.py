"""The catalogs' compiler: a ``.po`` catalog to the ``.mo`` bytes gettext reads.

It needs Babel and nothing of the package, so the build (``setup.py``, whose environment has
Babel but not the package's other dependencies) loads this file alone to compile the
catalogs it ships.
"""

from __future__ import annotations

import io

DOMAIN = "belote_p2p"


def compile_po(po: bytes, language: str) -> bytes:
    """A ``.po`` catalog compiled to ``.mo`` bytes (Babel), fuzzy entries left out as
    ``msgfmt`` does."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    catalog = read_po(io.BytesIO(po), locale=language, domain=DOMAIN, abort_invalid=True)
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()
