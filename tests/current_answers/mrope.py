"""posenc-current: wrong and alternative answers (to be written)."""

WRONG, WRONG_CONCEPTS, ALTERNATIVES = {}, {}, {}
