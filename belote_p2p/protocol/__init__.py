"""The peer-to-peer protocol, sans-io: the group and the mental-poker deck, identities,
signed envelopes, the table definition, one seat's table session, transcripts and their
offline verification. Bytes in, bytes and events out; no sockets, no clock
(``protocol/PROTOCOL.md`` and ``protocol/DECK.md`` specify it)."""
