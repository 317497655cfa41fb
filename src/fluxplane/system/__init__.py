"""What fluxplane needs from the machine: files written atomically, processes, Git, Node.js, the
project lock, the signing key of its caches, progress lines and multi-file transactions. Nothing here imports
another fluxplane package but errors."""
