"""Neo4j as the library talks to it: connecting, reading and the server's facts (``connection``,
``server``), the driver's costs worked around (``driver_io``), the read deadline (``deadline``),
the one read function for sync and async callers (``reads``) and whether a mapping fits a
database (``fit``).
"""
