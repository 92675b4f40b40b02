"""The table in a browser, for a person playing one seat (``--web``, ``belote-p2p web``).

The peer, the deck protocol and every check stay in Python: the page is only a view of one
seat and its input, served from the peer's own trio process on 127.0.0.1.

* :mod:`.cardsvg`: the cards as SVG, drawn by code (no image files, no network).
* :mod:`.viewmodel`: the JSON the page draws, built from the terminal's
  :class:`~belote_p2p.app.tui.TableView` (one way to know what a seat sees).
* :mod:`.page`: the page in its reader's language (its words translated as it is served,
  its script's catalog with it).
* :mod:`.table`: one seat's live table (the view, the pending decision, chat) and its
  :class:`~belote_p2p.players.player.Player`.
* :mod:`.server`: the ASGI app (pages, cards, JSON, a WebSocket), its token, cookie and
  Origin checks, served by hypercorn's trio worker.
* :mod:`.seat`: a seat played in the browser (what ``host``/``join``/``resume --web`` use).
* :mod:`.lobby`: ``belote-p2p web``, the lobby page (host, join, profile, ranking, games).

Nothing here is imported unless a browser table is asked for.
"""
