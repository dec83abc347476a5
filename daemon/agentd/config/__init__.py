"""Settings: files, models, prices, credentials, project trust (see README.md here)."""
