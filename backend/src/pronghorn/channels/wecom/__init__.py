"""WeCom (WeChat Work): the channel and its message encryption."""
