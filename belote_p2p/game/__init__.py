"""The rules of Belote, pure and deterministic: cards, rule sets, the engine, scoring, the
round audit and what one seat may know. No I/O, no clock, no randomness of its own."""
