"""OpenID Connect sign-in as a relying party: the client (authorization URL, callback), discovery
and keys, ID-token checks, the sealed login state, claims to user."""
