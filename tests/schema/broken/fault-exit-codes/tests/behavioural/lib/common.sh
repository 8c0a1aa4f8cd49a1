# shared module helpers
