"""DingTalk: the channel and its Stream mode connection."""
