"""The product's log lines while the suite runs its own engines: kept off the suite user's
stderr.

``streamproof conformance`` runs spark_impl's live front ends itself, with the crashes it
injects, the restarts it makes and the late tuples its cases carry on purpose. Their
``streamproof.*`` WARNING lines (:mod:`spark_impl.observe`: a batch replayed after a restart, a
late tuple dropped, a refused request) describe the suite's own doing, not news for the person
running the suite; and with no logging configured, Python prints every WARNING to stderr
(``logging.lastResort``), between the progress bars and before the summary.

:func:`product_logs_quiet` raises the ``streamproof`` logger, and every logger under it that has
a level of its own below the bar, to ERROR for the duration of a block, and puts every level
back afterwards (also when the block raises): an ERROR still shows, a later run in the same
process logs as before. Loggers of other names - a user's job's own, Spark's, py4j's - are
never touched: what a user's code logs stays the user's business.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from typing import Iterator

__all__ = ["PRODUCT_LOGGER", "product_logs_quiet"]

PRODUCT_LOGGER = "streamproof"
"""The root of the product's loggers (``streamproof.fries``, ``streamproof.oplus``, ...)."""


@contextmanager
def product_logs_quiet(level: int = logging.ERROR) -> Iterator[None]:
    """Within the block, ``streamproof`` and its descendants log only at ``level`` and above
    (module docstring); every logger's own level is restored on the way out."""
    root = logging.getLogger(PRODUCT_LOGGER)
    prefix = PRODUCT_LOGGER + "."
    loggers = [root] + [found for name, found in list(logging.Logger.manager.loggerDict.items())
                        if name.startswith(prefix) and isinstance(found, logging.Logger)]
    saved = {logger: logger.level for logger in loggers}
    for logger in loggers:
        if logger is root or logger.level != logging.NOTSET:  # NOTSET descendants follow the root
            logger.setLevel(max(logger.level, level))
    try:
        yield
    finally:
        for logger, old in saved.items():
            logger.setLevel(old)
