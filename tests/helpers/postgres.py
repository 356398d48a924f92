"""The tests' PostgreSQL server: the module fixture :func:`postgresql`, a server of the module's own
(:func:`posenc_course.qa.postgres.postgresql_server`, which the benchmarks use too). Without PostgreSQL, the tests
that use it are skipped and say why (and tests/conftest.py marks them ``postgres``)."""

import pytest

from posenc_course.qa.postgres import postgresql_programs, postgresql_server, postgresql_unavailable

__all__ = ["postgresql", "postgresql_programs", "postgresql_server", "postgresql_unavailable"]


@pytest.fixture(scope="module")
def postgresql():
    """``new_database()`` -> the URL of a new, empty database on a PostgreSQL server started for this
    module (:func:`postgresql_server`)."""
    why = postgresql_unavailable()
    if why:
        pytest.skip(why)
    with postgresql_server() as new_database:
        yield new_database
