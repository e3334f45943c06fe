"""mycode's context engine: a model view that stays useful, cheap and cache-friendly.

The hooks live in :mod:`mycode_context_engine.plugin`; the pieces: :mod:`.settings` (the
``[context]`` table), :mod:`.shaping` (big results and arguments become references),
:mod:`.summary` (the default summariser), :mod:`.compaction` (choosing what to keep).
"""
