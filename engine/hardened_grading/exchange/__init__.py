"""nbgrader's default exchange, made safe for a class on a shared machine: one class per module, each set in
``nbgrader_config.py`` by its dotted path (``c.ExchangeFactory.NAME = "hardened_grading.exchange.CLASS"``).

=====================  ====================  ==========================================================
``ExchangeFactory.``   class                 what it changes
=====================  ====================  ==========================================================
``release_assignment`` :class:`ReleaseAssignment`  never opens the exchange's folders to every user
                                             (:mod:`.release`, the layout in :mod:`.folders`)
``submit``             :class:`Submit`       the submission is its student's and the graders' alone
                                             (:mod:`.submit`)
``collect``            :class:`Collect`      copies a submission's regular files and folders only
                                             (:mod:`.collect`)
``release_feedback``   :class:`ReleaseFeedback`  releases everyone's feedback it can (:mod:`.feedback`)
=====================  ====================  ==========================================================
"""

from .collect import Collect
from .feedback import ReleaseFeedback
from .release import ReleaseAssignment
from .submit import Submit

__all__ = ["Collect", "ReleaseAssignment", "ReleaseFeedback", "Submit"]
