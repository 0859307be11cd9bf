"""Identity: who is asking (principals, authenticators) and what is theirs."""
