"""Who plays a seat: the bot plugin hook and registry, the Player protocol a live peer asks,
and bot-vs-bot matches on duplicate boards. Nothing here needs the network."""
