"""Skills: ``SKILL.md`` folders that teach the agent a job (discovery, validation, install).

This package knows files only; the enabled state lives in the database
(``persistence/repos/skills.py``) and the two meet in ``runtime/services/skills.py``.
"""
