"""Emulation: fabric -> Mininet hosts + BMv2 switches, run directories, cleanup."""
