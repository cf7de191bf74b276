from tests.security.helpers import no_ray  # noqa: F401  (a fixture for every test here)
