"""What a run writes for people and other tools: the Markdown report (:mod:`.report`) with its SVG
charts (:mod:`.svg`), branch coverage (:mod:`.coverage`, :mod:`.coverage_daemon`) and the
language-neutral test vectors (:mod:`.vectors`, :mod:`.vector_shape`).

Not here: running or judging cases.
"""
