"""Shared basics: errors, settings, paths, units, what a visitor may send, threads, the words."""
