"""The ``belote-p2p`` command: one module per job (host, join, resume, demo, records, bots,
the LAN), the data directory, the terminal table, the browser table (``web``) and the words
they print."""
