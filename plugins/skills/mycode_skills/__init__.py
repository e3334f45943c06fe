"""mycode-skills: Agent Skills (agentskills.io ``SKILL.md`` folders) for mycode.

The entry point ``skills`` is :mod:`mycode_skills.plugin`; the hook it adds for packages is
:func:`mycode_skills.hookspecs.register_skills`.
"""

__version__ = "0.1.0"
