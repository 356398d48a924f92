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
SLOW_MODULES = {"test_browser", "test_pythons", "test_check", "test_class_report", "test_feedback",
                "test_grade_class", "test_grading", "test_grading_advanced", "test_habits", "test_leaks",
                "test_mutation", "test_new_exercise", "test_platforms", "test_sandbox", "test_settings",
                "test_theory", "test_unreadable", "test_workflows", "test_foreign_courses",
                "test_engine_wheel"}


def pytest_configure(config):
    for name, what in TIERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        module = item.nodeid.partition("::")[0].rpartition("/")[2].removesuffix(".py")
        if module == "test_browser":
            item.add_marker(pytest.mark.browser)
        if module == "test_pythons":
            item.add_marker(pytest.mark.pythons)
        if "postgresql" in getattr(item, "fixturenames", ()) or "[postgresql]" in item.name:
            item.add_marker(pytest.mark.postgres)
        if module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
