//! pincer-auth: credentials. `auth-profiles.json` (API-key and OAuth profiles, 0600, atomic),
//! which profile a provider uses next (order, cooldowns after rate limits), the openai-codex
//! OAuth login (PKCE), and masking secrets for display.
