"""Authoring: the source notebooks built from their specs, checked against the reference, and released.

``make notebook`` (:mod:`.notebook`, checked by :mod:`.dryrun`), ``make release`` (:mod:`.generate`), the position
schemes the site is organised by (:mod:`.schemes`) and the site's overview figure (:mod:`.overview`).
"""
