"""Migrations: running them (``run``), their steps and records (``steps``), the files (``files``)
and the schema objects the project owns (``objects``).
"""
