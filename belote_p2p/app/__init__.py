"""The ``belote-p2p`` command: one module per job (host, join, resume, demo, records, bots,
the LAN), the data directory, the terminal table and the words it prints."""
