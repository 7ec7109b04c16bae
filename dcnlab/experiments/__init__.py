"""Experiments and the dcnlab CLI: bring up networks, run traffic, assert, write tables and plots."""
