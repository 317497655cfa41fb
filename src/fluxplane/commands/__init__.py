"""The CLI's commands, one module each: ``register`` adds its parser, ``run`` does it with typed library calls."""
