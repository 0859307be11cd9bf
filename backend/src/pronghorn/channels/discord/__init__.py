"""Discord: the channel, its slash commands and the places (guild channels, threads, DMs) it
answers in."""
