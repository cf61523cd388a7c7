"""Every key, its palette command, and the command palette itself."""
