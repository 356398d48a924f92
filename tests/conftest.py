import os

from hypothesis import settings

# No deadlines: the machine is shared and noisy. CI runs a fixed, derandomised set of examples.
settings.register_profile("dev", deadline=None, max_examples=60)
settings.register_profile("ci", deadline=None, max_examples=100, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


# Tiers. `make test` runs every test; a developer picks a tier with -m, for example the fast one in a
# few minutes: `pytest -m "not slow"`. A test is in a tier by what it starts: a browser, every Python,
# a PostgreSQL server, or real grading runs (nbgrader, kernels) on whole notebooks or classes.
TIERS = {
    "browser": "drives JupyterLab in a real browser (chromium)",
    "pythons": "installs the course with every supported Python, from a clean clone",
    "postgres": "starts a PostgreSQL server of its own",
    "slow": "runs real grading (nbgrader, kernels, the sandbox) on whole notebooks or classes",
}
# The modules that run real grading, heaviest first (by their time in a full run; `--durations` at the end of
# each run shows it): the suite starts them first, so that no long module is left to run alone at the end.
SLOW_MODULES = ("test_grading", "test_grade_class", "test_grading_advanced", "test_pythons", "test_mutation",
                "test_browser", "test_foreign_courses", "test_check", "test_feedback", "test_sandbox", "test_habits",
                "test_new_exercise", "test_platforms", "test_workflows", "test_class_report", "test_settings",
                "test_engine_wheel", "test_theory", "test_leaks", "test_unreadable")
# Tests that may run on any worker, each alone (`make test` runs the suite on every core with pytest-xdist):
# their module has no fixture that several of them share. Every other module runs whole on one worker, so
# that a module's fixtures (a class graded once, a PostgreSQL server) are made once.
SPREAD_MODULES = {"test_pythons"}


def pytest_configure(config):
    for name, what in TIERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")


def module_of(item):
    return item.nodeid.partition("::")[0].rpartition("/")[2].removesuffix(".py")


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        module = module_of(item)
        if module == "test_browser":
            item.add_marker(pytest.mark.browser)
        if module == "test_pythons":
            item.add_marker(pytest.mark.pythons)
        if "postgresql" in getattr(item, "fixturenames", ()) or "[postgresql]" in item.name:
            item.add_marker(pytest.mark.postgres)
        if module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
        if module not in SPREAD_MODULES:
            item.add_marker(pytest.mark.xdist_group(module))
    # Heaviest first; a stable sort keeps each module's own order.
    rank = {module: i for i, module in enumerate(SLOW_MODULES)}
    items.sort(key=lambda item: rank.get(module_of(item), len(rank)))
