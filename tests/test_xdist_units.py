"""CI's xdist work units (``tests/xdist_units.py``): the modules on the 5.26 server travel as
one, so one worker starts that server, and every module that uses it is listed."""

from __future__ import annotations

import re
from pathlib import Path

from tests.xdist_units import SERVER_526_MODULES, work_unit

TESTS = Path(__file__).resolve().parent
USES_526 = re.compile(r"\bapoc_(?:settings|driver)\b")


def test_the_526_modules_are_one_unit_and_every_other_module_its_own() -> None:
    units = {work_unit(f"{module}::test_x[a]") for module in SERVER_526_MODULES}
    assert len(units) == 1
    assert work_unit("tests/test_pipeline.py::test_x") == "tests/test_pipeline.py"
    assert work_unit("tests/test_pipeline.py::Class::test_x") == "tests/test_pipeline.py"
    assert work_unit("tests/test_pipeline.py::test_x") != units.pop()


def test_every_module_that_uses_the_526_server_is_listed() -> None:
    using = {
        f"tests/{path.name}"
        for path in TESTS.glob("test_*.py")
        if USES_526.search(path.read_text("utf-8"))
    }
    assert using, "no module uses the 5.26 server: the pattern above is stale"
    assert using == SERVER_526_MODULES
