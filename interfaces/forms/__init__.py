"""Hosted forms (/form/{key}), one-time forms (/form/s/{key}), form session pages (/form/run/{key}) and their files."""
