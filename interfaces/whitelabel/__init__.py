"""White-label domains: an account's own domain, serving its hosted forms and chat widgets."""
