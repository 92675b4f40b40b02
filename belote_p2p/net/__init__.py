"""The network, over trio: the authenticated mesh of connections, addresses, the lobby that
gathers a table, LAN discovery, and one seat's session driven over the mesh."""
