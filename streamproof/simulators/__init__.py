"""Simulators behind ``streamproof simulate``: each module defines ``register(subparsers)``
adding one positional (e.g. ``klink``) whose parser sets ``handler=``."""
