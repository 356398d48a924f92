import os

from hypothesis import settings

# No deadlines: the machine is shared and noisy. CI runs a fixed, derandomised set of examples.
settings.register_profile("dev", deadline=None, max_examples=60)
settings.register_profile("ci", deadline=None, max_examples=100, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
